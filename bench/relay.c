// A byte relay for bench/codemode_bench.mjs: runs argv[1..] with pipes for
// its stdin and stdout, then copies stdin -> the child's stdin and the
// child's stdout -> stdout on one thread (poll), parsing nothing. It is the
// cheapest extra process a message can cross: the floor for a bridged call.
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int copy(int from, int to) {
  char buf[65536];
  ssize_t n = read(from, buf, sizeof buf);
  if (n <= 0) return -1;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = write(to, buf + off, (size_t)(n - off));
    if (w <= 0) return -1;
    off += w;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: relay COMMAND [ARGS...]\n");
    return 2;
  }
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]); close(in[1]); close(out[0]); close(out[1]);
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  signal(SIGPIPE, SIG_IGN);
  struct pollfd fds[2] = {{0, POLLIN, 0}, {out[0], POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents && copy(0, in[1]) != 0) break;
    if (fds[1].revents && copy(out[0], 1) != 0) break;
  }
  kill(pid, SIGTERM);
  return 0;
}
