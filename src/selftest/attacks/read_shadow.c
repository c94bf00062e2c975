// Attack: read /etc/shadow.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  FILE* f = fopen("/etc/shadow", "r");
  if (f == NULL) {
    printf("DENIED: open(/etc/shadow): %s\n", strerrorname_np(errno));
    return 0;
  }
  char line[512];
  if (fgets(line, sizeof line, f) == NULL) {
    printf("DENIED: /etc/shadow opened but unreadable: %s\n", strerrorname_np(errno));
    return 0;
  }
  printf("ALLOWED: /etc/shadow: %s\n", line);
  return 0;
}
