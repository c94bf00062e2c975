// Attack: read the environment of the jail's PID 1 (/proc/1/environ); it must
// not carry anything from the supervisor (e.g. @SECRET_ENV_NAME@).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  int fd = open("/proc/1/environ", O_RDONLY);
  if (fd < 0) {
    printf("DENIED: open(/proc/1/environ): %s\n", strerrorname_np(errno));
    return 0;
  }
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  if (n < 0) {
    printf("DENIED: read(/proc/1/environ): %s\n", strerrorname_np(errno));
    return 0;
  }
  for (ssize_t j = 0; j < n; ++j)
    if (buf[j] == 0) buf[j] = '\n';
  buf[n] = 0;
  printf("%s\n", buf);
  if (strstr(buf, "@SECRET_ENV_NAME@") != NULL) printf("ALLOWED: PID 1 has @SECRET_ENV_NAME@ in its environment\n");
  else printf("DENIED: PID 1's environment (%zd bytes) has nothing from the supervisor\n", n);
  return 0;
}
