// Attack: TIOCSTI (push input into a terminal) on fd 0 and on /dev/tty, also
// with junk in the high 32 bits of the request (CVE-2019-10063 style).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int Try(int fd, const char* what) {
  char c = 'x';
  int allowed = 0;
  if (ioctl(fd, TIOCSTI, &c) == 0) { printf("ALLOWED: TIOCSTI on %s\n", what); allowed = 1; }
  else printf("TIOCSTI on %s: %s\n", what, strerrorname_np(errno));
  if (syscall(SYS_ioctl, fd, (0x123UL << 32) | TIOCSTI, &c) == 0) {
    printf("ALLOWED: TIOCSTI (high bits set) on %s\n", what);
    allowed = 1;
  } else {
    printf("TIOCSTI (high bits set) on %s: %s\n", what, strerrorname_np(errno));
  }
  return allowed;
}

int main(void) {
  int allowed = Try(0, "fd 0");
  int tty = open("/dev/tty", O_RDWR);
  if (tty >= 0) allowed |= Try(tty, "/dev/tty");
  else printf("/dev/tty: %s\n", strerrorname_np(errno));
  if (!allowed) printf("DENIED: TIOCSTI is not available\n");
  return 0;
}
