// Enforced: allocate and touch memory until the memory limit kills us.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  size_t total = 0;
  for (;;) {
    char* p = malloc(8 << 20);
    if (p == NULL) {
      printf("DENIED: malloc failed after %zu MiB\n", total >> 20);
      return 0;
    }
    memset(p, 1, 8 << 20);
    total += 8 << 20;
    if (total >= (8ull << 30)) {
      printf("ALLOWED: 8 GiB allocated\n");
      return 0;
    }
  }
}
