// The read-only tar preopen (--tar ARCHIVE=/lib): its files read normally,
// and every attempt to change it fails (EROFS) without changing anything.
// Runs with the archive holding hello.txt, sub/data.txt and an empty
// directory empty/ at /lib and a writable --work dir as the cwd.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conformance.h"

int main(void) {
  struct stat st;
  CHECK("read", content_is("/lib/hello.txt", "hello from the tar\n"));
  CHECK("read.nested", content_is("/lib/sub/data.txt", "data\n"));
  CHECK("stat", stat("/lib/hello.txt", &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 19);
  CHECK("stat.dir", stat("/lib/sub", &st) == 0 && S_ISDIR(st.st_mode));
  CHECK("stat.empty.dir", stat("/lib/empty", &st) == 0 && S_ISDIR(st.st_mode));
  DIR* d = opendir("/lib");
  int n = 0;
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    n += strcmp(e->d_name, "hello.txt") == 0 || strcmp(e->d_name, "sub") == 0 || strcmp(e->d_name, "empty") == 0;
  }
  if (d) closedir(d);
  CHECK("readdir", n == 3);

  CHECK_ERRNO("open.wronly", open("/lib/hello.txt", O_WRONLY), EROFS);
  CHECK_ERRNO("open.rdwr", open("/lib/hello.txt", O_RDWR), EROFS);
  CHECK_ERRNO("open.trunc", open("/lib/hello.txt", O_RDONLY | O_TRUNC), EROFS);
  CHECK_ERRNO("open.append", open("/lib/hello.txt", O_WRONLY | O_APPEND), EROFS);
  CHECK_ERRNO("create", open("/lib/new.txt", O_WRONLY | O_CREAT, 0644), EROFS);
  CHECK_ERRNO("create.nested", open("/lib/sub/new.txt", O_RDONLY | O_CREAT, 0644), EROFS);
  CHECK_ERRNO("mkdir", mkdir("/lib/newdir", 0755), EROFS);
  CHECK_ERRNO("unlink", unlink("/lib/hello.txt"), EROFS);
  CHECK_ERRNO("rmdir", rmdir("/lib/empty"), EROFS);
  // A non-empty or wrong-kind entry may report that first (as the VFS does).
  CHECK("rmdir.nonempty", rmdir("/lib/sub") == -1 && (errno == ENOTEMPTY || errno == EROFS));
  CHECK("unlink.dir", unlink("/lib/sub") == -1 && (errno == EISDIR || errno == EROFS));
  CHECK_ERRNO("rename.within", rename("/lib/hello.txt", "/lib/moved.txt"), EROFS);
  CHECK_ERRNO("rename.out", rename("/lib/hello.txt", "/work/stolen.txt"), EROFS);
  int fd = open("mine.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  close(fd);
  CHECK_ERRNO("rename.in", rename("/work/mine.txt", "/lib/mine.txt"), EROFS);
  CHECK_ERRNO("rename.over", rename("/work/mine.txt", "/lib/hello.txt"), EROFS);
  struct timespec t[2] = {{1, 0}, {1, 0}};
  CHECK_ERRNO("utimensat", utimensat(AT_FDCWD, "/lib/hello.txt", t, 0), EROFS);

  fd = open("/lib/hello.txt", O_RDONLY);
  CHECK("open.rdonly", fd >= 0);
  CHECK_ERRNO("fd.write", write(fd, "x", 1), EBADF);
  CHECK_ERRNO("fd.pwrite", pwrite(fd, "x", 1, 0), EBADF);
  CHECK_ERRNO("fd.ftruncate", ftruncate(fd, 0), EBADF);
  CHECK_ERRNO("fd.futimens", futimens(fd, t), EROFS);
  close(fd);

  CHECK("unchanged", content_is("/lib/hello.txt", "hello from the tar\n") && stat("/lib/new.txt", &st) == -1 &&
                         stat("/lib/moved.txt", &st) == -1 && stat("/work/stolen.txt", &st) == -1 &&
                         stat("/lib/sub/data.txt", &st) == 0 && stat("/lib/empty", &st) == 0);
  return 0;
}
