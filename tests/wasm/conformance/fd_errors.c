// Descriptor errors and bookkeeping: EBADF on closed or unknown
// descriptors, EISDIR reading a directory, lowest-free numbering,
// fd_renumber, fcntl flags, and the descriptor limit (EMFILE).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wasi/api.h>

#include "conformance.h"

int main(void) {
  char buf[16];
  int fd = open("f.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK("open", fd >= 3 && write(fd, "abc", 3) == 3);
  CHECK("close", close(fd) == 0);
  CHECK_ERRNO("read.closed", read(fd, buf, 1), EBADF);
  CHECK_ERRNO("write.closed", write(fd, "x", 1), EBADF);
  CHECK_ERRNO("close.closed", close(fd), EBADF);
  CHECK_ERRNO("seek.closed", lseek(fd, 0, SEEK_SET), EBADF);
  struct stat st;
  CHECK_ERRNO("fstat.closed", fstat(fd, &st), EBADF);
  CHECK_ERRNO("fsync.closed", fsync(fd), EBADF);
  CHECK_ERRNO("ftruncate.closed", ftruncate(fd, 0), EBADF);
  CHECK_ERRNO("read.unknown", read(4000, buf, 1), EBADF);
  CHECK_ERRNO("close.negative", close(-1), EBADF);

  // A directory descriptor: reading, writing and seeking it fail.
  int dfd = open(".", O_RDONLY);
  CHECK("open.dir", dfd >= 0 && fstat(dfd, &st) == 0 && S_ISDIR(st.st_mode));
  CHECK_ERRNO("read.dir", read(dfd, buf, sizeof buf), EISDIR);
  CHECK_ERRNO("pread.dir", pread(dfd, buf, sizeof buf, 0), EISDIR);
  CHECK_ERRNO("write.dir", write(dfd, "x", 1), EBADF);
  CHECK_ERRNO("open.dir.for.write", open(".", O_WRONLY), EISDIR);
  CHECK_ERRNO("open.dir.rdwr", open(".", O_RDWR), EISDIR);
  CHECK_ERRNO("open.file.as.dir", open("f.txt", O_RDONLY | O_DIRECTORY), ENOTDIR);
  CHECK_ERRNO("open.file.trailing.slash", open("f.txt/", O_RDONLY), ENOTDIR);
  CHECK_ERRNO("ftruncate.dir", ftruncate(dfd, 0), EISDIR);
  close(dfd);

  // The lowest free number is reused.
  int a = open("f.txt", O_RDONLY), b = open("f.txt", O_RDONLY), c = open("f.txt", O_RDONLY);
  CHECK("numbers.increase", a >= 0 && b == a + 1 && c == b + 1);
  close(b);
  int d = open("f.txt", O_RDONLY);
  CHECK("lowest.free.reused", d == b);

  // fd_renumber moves a descriptor onto another (closing that one).
  CHECK("renumber", __wasi_fd_renumber((__wasi_fd_t)c, (__wasi_fd_t)a) == 0);
  CHECK_ERRNO("renumber.source.closed", read(c, buf, 1), EBADF);
  CHECK("renumber.target.works", pread(a, buf, 3, 0) == 3 && memcmp(buf, "abc", 3) == 0);
  CHECK("renumber.unknown", __wasi_fd_renumber(4000, (__wasi_fd_t)a) == __WASI_ERRNO_BADF);
  CHECK("renumber.to.unknown", __wasi_fd_renumber((__wasi_fd_t)a, 4000) == __WASI_ERRNO_BADF);
  close(a);
  close(d);

  // fcntl: status flags round-trip.
  fd = open("f.txt", O_WRONLY | O_APPEND);
  CHECK("fcntl.getfl.append", fd >= 0 && (fcntl(fd, F_GETFL) & O_APPEND) && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY);
  CHECK("fcntl.setfl", fcntl(fd, F_SETFL, 0) == 0 && !(fcntl(fd, F_GETFL) & O_APPEND));
  CHECK("setfl.no.append", write(fd, "Z", 1) == 1 && pread(open("f.txt", O_RDONLY), buf, 3, 0) == 3 && buf[0] == 'Z');
  CHECK_ERRNO("fcntl.badf", fcntl(4000, F_GETFL), EBADF);
  close(fd);

  // The descriptor table is bounded.
  int opened = 0, last = -1, err = 0;
  for (int i = 0; i < 5000; ++i) {
    last = open("f.txt", O_RDONLY);
    if (last < 0) {
      err = errno;
      break;
    }
    ++opened;
  }
  CHECK("emfile", last == -1 && err == EMFILE && opened > 500);
  return 0;
}
