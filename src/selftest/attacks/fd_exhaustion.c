// Enforced: open files until the descriptor limit (EMFILE).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  for (int n = 0; n < 100000; ++n) {
    if (open("/dev/null", O_RDONLY) < 0) {
      printf("DENIED: %s after %d open files\n", strerrorname_np(errno), n);
      return 0;
    }
  }
  printf("ALLOWED: 100000 files open without hitting a limit\n");
  return 0;
}
