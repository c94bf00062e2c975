// Attack: kernel keyrings (not namespaced: a channel between runs).
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
  int allowed = 0;
  long r = syscall(SYS_add_key, "user", "airlock-selftest", "x", 1, -2 /* KEY_SPEC_PROCESS_KEYRING */);
  if (r >= 0) { printf("ALLOWED: add_key -> %ld\n", r); allowed = 1; }
  else printf("add_key: %s\n", strerrorname_np(errno));
  r = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -4 /* KEY_SPEC_USER_KEYRING */, 1);
  if (r >= 0) { printf("ALLOWED: keyctl(GET_KEYRING_ID, user) -> %ld\n", r); allowed = 1; }
  else printf("keyctl: %s\n", strerrorname_np(errno));
  r = syscall(SYS_request_key, "user", "airlock-selftest", NULL, 0);
  if (r >= 0) { printf("ALLOWED: request_key -> %ld\n", r); allowed = 1; }
  else printf("request_key: %s\n", strerrorname_np(errno));
  if (!allowed) printf("DENIED: keyrings are not available\n");
  return 0;
}
