// Attack: UDP datagram to 127.0.0.1:@UDP_PORT@, where the suite receives on the host.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(void) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) {
    printf("DENIED: socket(AF_INET, SOCK_DGRAM): %s\n", strerrorname_np(errno));
    return 0;
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(@UDP_PORT@)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (sendto(fd, "escape", 6, 0, (struct sockaddr*)&a, sizeof a) != 6) {
    printf("DENIED: sendto(127.0.0.1:@UDP_PORT@): %s\n", strerrorname_np(errno));
    return 0;
  }
  printf("ALLOWED: sent a datagram to 127.0.0.1:@UDP_PORT@\n");
  return 0;
}
