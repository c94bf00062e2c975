// Attack: TCP connection to [::1]:@TCP_PORT@, where the suite listens on the host.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(void) {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) {
    printf("DENIED: socket(AF_INET6, SOCK_STREAM): %s\n", strerrorname_np(errno));
    return 0;
  }
  struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(@TCP_PORT@)};
  inet_pton(AF_INET6, "::1", &a.sin6_addr);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
    printf("DENIED: connect([::1]:@TCP_PORT@): %s\n", strerrorname_np(errno));
    return 0;
  }
  printf("ALLOWED: connected to [::1]:@TCP_PORT@\n");
  return 0;
}
