// Attack: reach a global IPv6 address (2001:db8::1, UDP port 53): a route
// out of the jail would let connect() succeed and the datagram leave.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(void) {
  int fd = socket(AF_INET6, SOCK_DGRAM, 0);
  if (fd < 0) {
    printf("DENIED: socket(AF_INET6, SOCK_DGRAM): %s\n", strerrorname_np(errno));
    return 0;
  }
  struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(53)};
  inet_pton(AF_INET6, "2001:db8::1", &a.sin6_addr);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
    printf("DENIED: connect([2001:db8::1]:53): %s\n", strerrorname_np(errno));
    return 0;
  }
  if (send(fd, "escape", 6, 0) != 6) {
    printf("DENIED: send([2001:db8::1]:53): %s\n", strerrorname_np(errno));
    return 0;
  }
  printf("ALLOWED: sent a datagram to [2001:db8::1]:53\n");
  return 0;
}
