// Attack: read the file the suite planted on the host (outside the jail),
// directly and through /proc/<pid>/root of the supervisor and of PID 1.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  const char* paths[] = {"@SECRET_PATH@", "/proc/@HOST_PID@/root@SECRET_PATH@", "/proc/1/root@SECRET_PATH@"};
  int allowed = 0;
  for (int i = 0; i < 3; ++i) {
    int fd = open(paths[i], O_RDONLY);
    if (fd < 0) {
      printf("%s: %s\n", paths[i], strerrorname_np(errno));
      continue;
    }
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n >= 0) {
      buf[n] = 0;
      printf("ALLOWED: read %zd bytes from %s: %s\n", n, paths[i], buf);
      allowed = 1;
    }
    close(fd);
  }
  if (!allowed) printf("DENIED: the secret file is not reachable\n");
  return 0;
}
