// Allowed: read all of stdin and echo it back.
#include <stdio.h>

int main(void) {
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, stdin);
  buf[n] = 0;
  printf("got: %s\nOK: read %zu bytes from stdin\n", buf, n);
  return 0;
}
