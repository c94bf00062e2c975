// Attack: read the supervisor's environment (/proc/@HOST_PID@/environ), which
// holds the secret variable @SECRET_ENV_NAME@.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  // In a container the supervisor's pid is small, and the jail's own PID
  // namespace may give this very program the same number: then the path
  // names this program, never the supervisor (one namespace cannot hold
  // both under one number).
  if (getpid() == @HOST_PID@) {
    printf("DENIED: pid @HOST_PID@ is this program in the jail's own PID namespace, not the supervisor\n");
    return 0;
  }
  const char* paths[] = {"/proc/@HOST_PID@/environ", "/proc/@HOST_PID@/cmdline"};
  int allowed = 0;
  for (int i = 0; i < 2; ++i) {
    int fd = open(paths[i], O_RDONLY);
    if (fd < 0) {
      printf("%s: %s\n", paths[i], strerrorname_np(errno));
      continue;
    }
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) {
      printf("%s: empty or unreadable\n", paths[i]);
      continue;
    }
    for (ssize_t j = 0; j < n; ++j)
      if (buf[j] == 0) buf[j] = '\n';
    buf[n] = 0;
    printf("%s\nALLOWED: read %zd bytes from %s\n", buf, n, paths[i]);
    allowed = 1;
  }
  if (!allowed) printf("DENIED: the supervisor's /proc entries are not reachable\n");
  return 0;
}
