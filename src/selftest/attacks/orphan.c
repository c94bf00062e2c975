// Enforced: leave a daemon behind. A double-forked, setsid()'d shell that
// sleeps forever (its command line carries the marker @MARKER@); we wait until
// it runs, then exit. After the run no process with the marker may exist.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int sync[2];
  if (pipe2(sync, O_CLOEXEC) != 0) return 1;
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    setsid();
    if (fork() == 0) {
      int null_fd = open("/dev/null", O_RDWR);
      dup2(null_fd, 0);
      dup2(null_fd, 1);
      dup2(null_fd, 2);
      execl("/bin/sh", "sh", "-c", "sleep 1000; : @MARKER@", (char*)NULL);
      _exit(127);
    }
    _exit(0);
  }
  close(sync[1]);
  char c;
  (void)read(sync[0], &c, 1);  // EOF once the grandchild exec'd (or died)
  waitpid(child, NULL, 0);
  usleep(100 * 1000);
  printf("STARTED: daemon left behind\n");
  return 0;
}
