// Attack: list the host's /root.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  DIR* d = opendir("/root");
  if (d == NULL) {
    printf("DENIED: opendir(/root): %s\n", strerrorname_np(errno));
    return 0;
  }
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    printf("/root/%s\n", e->d_name);
    ++n;
  }
  if (n > 0) printf("ALLOWED: /root lists %d entries\n", n);
  else printf("DENIED: /root is an empty directory in the jail\n");
  return 0;
}
