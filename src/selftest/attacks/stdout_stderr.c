// Allowed: write to both streams.
#include <stdio.h>

int main(void) {
  fprintf(stderr, "to-stderr\n");
  printf("to-stdout\nOK: wrote both streams\n");
  return 0;
}
