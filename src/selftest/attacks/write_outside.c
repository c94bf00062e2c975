// Attack: create files outside the work dir (and overwrite the planted secret).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  const char* paths[] = {"/usr/@MARKER@", "/etc/@MARKER@", "/@MARKER@", "/work/../@MARKER@.up", "@SECRET_PATH@"};
  int allowed = 0;
  for (int i = 0; i < 5; ++i) {
    int fd = open(paths[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
      printf("%s: %s\n", paths[i], strerrorname_np(errno));
      continue;
    }
    ssize_t n = write(fd, "pwned\n", 6);
    close(fd);
    printf("ALLOWED: created %s (wrote %zd bytes)\n", paths[i], n);
    allowed = 1;
  }
  if (!allowed) printf("DENIED: nothing outside the work dir is writable\n");
  return 0;
}
