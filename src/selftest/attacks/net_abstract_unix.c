// Attack: connect to the abstract AF_UNIX socket "@ABSTRACT_SOCKET@" that the
// suite listens on in the host's network namespace.
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

int main(void) {
  const char name[] = "@ABSTRACT_SOCKET@";
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    printf("DENIED: socket(AF_UNIX): %s\n", strerrorname_np(errno));
    return 0;
  }
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  memcpy(a.sun_path + 1, name, strlen(name));  // sun_path[0] == 0: abstract
  socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
  if (connect(fd, (struct sockaddr*)&a, len) != 0) {
    printf("DENIED: connect(@%s): %s\n", name, strerrorname_np(errno));
    return 0;
  }
  printf("ALLOWED: connected to the host abstract socket @%s\n", name);
  return 0;
}
