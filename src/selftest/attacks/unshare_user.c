// Attack: make a new user namespace (unshare, and clone with CLONE_NEWUSER),
// which would hand the program a full set of capabilities inside it.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int allowed = 0;
  if (unshare(CLONE_NEWUSER) == 0) {
    printf("ALLOWED: unshare(CLONE_NEWUSER) succeeded\n");
    allowed = 1;
  } else {
    printf("unshare(CLONE_NEWUSER): %s\n", strerrorname_np(errno));
  }
  long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  if (pid > 0) {
    waitpid((pid_t)pid, NULL, 0);
    printf("ALLOWED: clone(CLONE_NEWUSER) succeeded\n");
    allowed = 1;
  } else {
    printf("clone(CLONE_NEWUSER): %s\n", strerrorname_np(errno));
  }
  if (!allowed) printf("DENIED: no new user namespace\n");
  return 0;
}
