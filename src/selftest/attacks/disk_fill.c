// Enforced: fill the work dir until the disk is full (ENOSPC), in 4 MiB files.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  static char buf[1 << 20];
  memset(buf, 'x', sizeof buf);
  unsigned long long total = 0;
  for (int i = 0; i < 256; ++i) {
    char name[64];
    snprintf(name, sizeof name, "/work/fill-%d", i);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
      printf("DENIED: %s after %llu bytes\n", strerrorname_np(errno), total);
      return 0;
    }
    for (size_t left = 4 * sizeof buf; left > 0;) {
      ssize_t n = write(fd, buf, left < sizeof buf ? left : sizeof buf);
      if (n < 0) {
        printf("DENIED: %s after %llu bytes\n", strerrorname_np(errno), total);
        return 0;
      }
      total += (unsigned long long)n;
      left -= (size_t)n;
    }
    close(fd);
  }
  printf("ALLOWED: wrote %llu bytes without running out of space\n", total);
  return 0;
}
