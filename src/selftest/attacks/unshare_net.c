// Attack: make a new network namespace, alone and together with a new user
// namespace (which would grant CAP_NET_ADMIN over it).
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int allowed = 0;
  if (unshare(CLONE_NEWNET) == 0) {
    printf("ALLOWED: unshare(CLONE_NEWNET) succeeded\n");
    allowed = 1;
  } else {
    printf("unshare(CLONE_NEWNET): %s\n", strerrorname_np(errno));
  }
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
    printf("ALLOWED: unshare(CLONE_NEWUSER|CLONE_NEWNET) succeeded\n");
    allowed = 1;
  } else {
    printf("unshare(CLONE_NEWUSER|CLONE_NEWNET): %s\n", strerrorname_np(errno));
  }
  if (!allowed) printf("DENIED: no new network namespace\n");
  return 0;
}
