// Attack: io_uring_setup (io_uring ops bypass seccomp and can create sockets).
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
  unsigned char params[120];  // struct io_uring_params
  memset(params, 0, sizeof params);
  long r = syscall(SYS_io_uring_setup, 4, params);
  if (r >= 0) printf("ALLOWED: io_uring_setup -> fd %ld\n", r);
  else printf("DENIED: io_uring_setup: %s\n", strerrorname_np(errno));
  return 0;
}
