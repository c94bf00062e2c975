// Enforced: write to stdout forever; the output cap must end the run.
#include <stdio.h>
#include <string.h>

int main(void) {
  static char buf[65536];
  memset(buf, 'A', sizeof buf);
  for (;;) fwrite(buf, 1, sizeof buf, stdout);
}
