// Attack: userfaultfd (used to stall kernel copies and widen race windows),
// via the syscall and via /dev/userfaultfd.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
  int allowed = 0;
  long r = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  if (r >= 0) { printf("ALLOWED: userfaultfd() -> fd %ld\n", r); allowed = 1; }
  else printf("userfaultfd(): %s\n", strerrorname_np(errno));
  r = syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */);
  if (r >= 0) { printf("ALLOWED: userfaultfd(UFFD_USER_MODE_ONLY) -> fd %ld\n", r); allowed = 1; }
  else printf("userfaultfd(UFFD_USER_MODE_ONLY): %s\n", strerrorname_np(errno));
  int fd = open("/dev/userfaultfd", O_RDWR);
  if (fd >= 0) { printf("ALLOWED: opened /dev/userfaultfd\n"); allowed = 1; }
  else printf("/dev/userfaultfd: %s\n", strerrorname_np(errno));
  if (!allowed) printf("DENIED: userfaultfd is not available\n");
  return 0;
}
