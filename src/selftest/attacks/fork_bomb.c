// Enforced: fork until the jail's process limit stops us; children stay alive
// (sleeping) so the count is real. More than 1000 processes means no limit.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  for (int n = 0; n < 1000; ++n) {
    pid_t pid = fork();
    if (pid == 0) {
      for (;;) pause();
    }
    if (pid < 0) {
      printf("DENIED: fork failed after %d children: %s\n", n, strerrorname_np(errno));
      return 0;
    }
  }
  printf("ALLOWED: 1000 processes created without hitting a limit\n");
  return 0;
}
