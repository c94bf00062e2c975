// Attack: ptrace — PTRACE_TRACEME, attach to the parent (the jail's init),
// and attach to a child of our own (same uid: only seccomp stops it).
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int allowed = 0;
  pid_t child = fork();
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0) printf("ALLOWED: PTRACE_TRACEME succeeded\n");
    else printf("PTRACE_TRACEME: %s\n", strerrorname_np(errno));
    fflush(stdout);
    _exit(0);
  }
  int st;
  waitpid(child, &st, 0);
  if (ptrace(PTRACE_ATTACH, getppid(), 0, 0) == 0) {
    printf("ALLOWED: attached to parent %d\n", getppid());
    allowed = 1;
  } else {
    printf("PTRACE_ATTACH(parent %d): %s\n", getppid(), strerrorname_np(errno));
  }
  pid_t victim = fork();
  if (victim == 0) {
    for (;;) pause();
  }
  if (ptrace(PTRACE_ATTACH, victim, 0, 0) == 0) {
    printf("ALLOWED: attached to own child %d\n", victim);
    allowed = 1;
  } else {
    printf("PTRACE_ATTACH(child %d): %s\n", victim, strerrorname_np(errno));
  }
  kill(victim, SIGKILL);
  waitpid(victim, &st, 0);
  if (!allowed) printf("DENIED: ptrace is not available\n");
  return 0;
}
