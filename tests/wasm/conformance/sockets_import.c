// A module that imports socket calls the host does not provide (a later
// WASI's sock_open/sock_connect): it must not run at all. The driver
// expects instantiation to fail (exit status 2, "invalid module").
#include <stdint.h>
#include <stdio.h>

__attribute__((import_module("wasi_snapshot_preview1"), import_name("sock_open")))
int32_t sock_open(int32_t af, int32_t type, int32_t out_fd);
__attribute__((import_module("wasi_snapshot_preview1"), import_name("sock_connect")))
int32_t sock_connect(int32_t fd, int32_t addr);

int main(void) {
  int32_t fd = -1;
  int32_t e = sock_open(1, 1, (int32_t)(intptr_t)&fd);
  printf("sock_open returned %d\n", e);
  if (e == 0) printf("connect returned %d\n", sock_connect(fd, 0));
  return 0;
}
