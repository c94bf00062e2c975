// Attack: mount a tmpfs over /tmp, remount / read-write, bind-mount /.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

int main(void) {
  int allowed = 0;
  if (mount("none", "/tmp", "tmpfs", 0, "size=1m") == 0) {
    printf("ALLOWED: mounted a tmpfs on /tmp\n");
    allowed = 1;
  } else {
    printf("mount(tmpfs, /tmp): %s\n", strerrorname_np(errno));
  }
  if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL) == 0) {
    printf("ALLOWED: remounted /\n");
    allowed = 1;
  } else {
    printf("mount(MS_REMOUNT, /): %s\n", strerrorname_np(errno));
  }
  if (mount("/", "/tmp", NULL, MS_BIND | MS_REC, NULL) == 0) {
    printf("ALLOWED: bind-mounted / on /tmp\n");
    allowed = 1;
  } else {
    printf("mount(MS_BIND, /, /tmp): %s\n", strerrorname_np(errno));
  }
  if (!allowed) printf("DENIED: mount is not available\n");
  return 0;
}
