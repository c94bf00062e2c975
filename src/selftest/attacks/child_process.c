// Allowed: fork and exec a child process.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/echo", "echo", "hi-from-child", (char*)NULL);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  printf(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "OK: child exited 0\n" : "FAIL: child status %d\n", st);
  return 0;
}
