// Enforced: ask for output files that are symlinks to host files (and a
// directory symlink); the collector must not follow them. normal.txt must
// still be collected.
#include <stdio.h>
#include <unistd.h>

int main(void) {
  FILE* f = fopen("normal.txt", "w");
  if (f == NULL) return 1;
  fputs("hello\n", f);
  fclose(f);
  if (symlink("/etc/passwd", "out.txt") != 0) return 1;
  if (symlink("@SECRET_PATH@", "secret_link.txt") != 0) return 1;
  if (symlink("/etc", "linkdir") != 0) return 1;
  if (symlink("/proc/self/environ", "environ.txt") != 0) return 1;
  printf("STARTED: symlinks in place\n");
  return 0;
}
