// Attack: TCP connection to 127.0.0.1:@TCP_PORT@, where the suite listens on the host.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    printf("DENIED: socket(AF_INET, SOCK_STREAM): %s\n", strerrorname_np(errno));
    return 0;
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(@TCP_PORT@)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
    printf("DENIED: connect(127.0.0.1:@TCP_PORT@): %s\n", strerrorname_np(errno));
    return 0;
  }
  printf("ALLOWED: connected to 127.0.0.1:@TCP_PORT@\n");
  return 0;
}
