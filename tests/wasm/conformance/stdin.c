// Standard input: read to the end in small pieces (several fd_read calls),
// poll_oneoff on stdin with a clock timeout (ready at once: data, then
// end-of-file), stdout as writable, and the stdio streams' types.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(void) {
  // Before reading: stdin is readable now, so a long timeout does not wait.
  struct pollfd p = {0, POLLIN, 0};
  long long start = now_ms();
  CHECK("poll.stdin.ready", poll(&p, 1, 5000) == 1 && (p.revents & POLLIN));
  CHECK("poll.stdin.no.wait", now_ms() - start < 2000);

  // Read everything in 1000-byte pieces.
  static char buf[1 << 20];
  size_t total = 0;
  ssize_t n;
  while ((n = read(0, buf + total, 1000)) > 0) total += (size_t)n;
  CHECK("read.to.eof", n == 0);
  unsigned long sum = 0;
  for (size_t i = 0; i < total; ++i) sum = sum * 31 + (unsigned char)buf[i];
  printf("stdin %zu bytes, first [%.*s], hash %lu\n", total, total < 16 ? (int)total : 16, buf, sum);
  CHECK("read.after.eof", read(0, buf, 10) == 0);

  // At end-of-file stdin stays readable (read returns 0 at once).
  p.revents = 0;
  start = now_ms();
  CHECK("poll.stdin.eof", poll(&p, 1, 5000) == 1 && (p.revents & POLLIN) && now_ms() - start < 2000);

  // stdout is writable; both at once report both.
  struct pollfd two[2] = {{0, POLLIN, 0}, {1, POLLOUT, 0}};
  CHECK("poll.stdin.stdout", poll(two, 2, 1000) == 2 && (two[0].revents & POLLIN) && (two[1].revents & POLLOUT));

  // stdin is not seekable, and not writable.
  CHECK_ERRNO("stdin.seek", lseek(0, 0, SEEK_SET), ESPIPE);
  CHECK_ERRNO("stdin.write", write(0, "x", 1), EBADF);
  CHECK_ERRNO("stdin.pread", pread(0, buf, 1, 0), ESPIPE);
  CHECK_ERRNO("stdout.pwrite", pwrite(1, "x", 1, 0), ESPIPE);
  CHECK_ERRNO("stdout.read", read(1, buf, 1), EBADF);
  CHECK("stdin.not.a.tty", !isatty(0) && !isatty(1));
  return 0;
}
