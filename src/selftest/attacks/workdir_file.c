// Allowed: write a file in the work dir and read it back.
#include <stdio.h>
#include <string.h>

int main(void) {
  FILE* f = fopen("/work/data.txt", "w");
  if (f == NULL) { printf("FAIL: cannot create /work/data.txt\n"); return 0; }
  fputs("round trip", f);
  fclose(f);
  char buf[64] = "";
  f = fopen("data.txt", "r");
  if (f == NULL || fgets(buf, sizeof buf, f) == NULL) { printf("FAIL: cannot read back\n"); return 0; }
  printf(strcmp(buf, "round trip") == 0 ? "OK: %s\n" : "FAIL: %s\n", buf);
  return 0;
}
