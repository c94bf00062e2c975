// Regular files: open flags, read/write, pread/pwrite, seek/tell,
// ftruncate, fsync/fdatasync. Runs with a writable --work dir as the cwd.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "conformance.h"

static int read_all(const char* path, char* buf, size_t cap) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, cap - 1);
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return (int)n;
}

int main(void) {
  char buf[256];

  // Create, write, read back.
  int fd = open("f.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK("open.create", fd >= 3);
  CHECK("write", write(fd, "hello world", 11) == 11);
  CHECK("close", close(fd) == 0);
  CHECK("read.back", read_all("f.txt", buf, sizeof buf) == 11 && strcmp(buf, "hello world") == 0);
  CHECK_ERRNO("open.missing", open("missing.txt", O_RDONLY), ENOENT);

  // O_EXCL on an existing file; O_CREAT without O_EXCL opens it.
  CHECK_ERRNO("open.excl.exists", open("f.txt", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
  fd = open("new.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
  CHECK("open.excl.new", fd >= 0 && close(fd) == 0);
  fd = open("f.txt", O_RDONLY | O_CREAT, 0644);
  CHECK("open.creat.existing", fd >= 0 && read(fd, buf, 5) == 5 && memcmp(buf, "hello", 5) == 0);
  close(fd);

  // O_APPEND: every write lands at the end, whatever the offset.
  fd = open("f.txt", O_WRONLY | O_APPEND);
  CHECK("open.append", fd >= 0);
  CHECK("append.write", write(fd, "!", 1) == 1);
  CHECK("append.seek0", lseek(fd, 0, SEEK_SET) == 0);
  CHECK("append.write2", write(fd, "?", 1) == 1);
  close(fd);
  CHECK("append.content", read_all("f.txt", buf, sizeof buf) == 13 && strcmp(buf, "hello world!?") == 0);

  // O_TRUNC empties it.
  fd = open("f.txt", O_RDWR | O_TRUNC);
  CHECK("open.trunc", fd >= 0 && lseek(fd, 0, SEEK_END) == 0);
  CHECK("rdwr.write", write(fd, "0123456789", 10) == 10);

  // Seek and tell, including SEEK_END and negative offsets.
  CHECK("tell.after.write", lseek(fd, 0, SEEK_CUR) == 10);
  CHECK("seek.set", lseek(fd, 2, SEEK_SET) == 2 && read(fd, buf, 3) == 3 && memcmp(buf, "234", 3) == 0);
  CHECK("seek.cur.negative", lseek(fd, -2, SEEK_CUR) == 3 && read(fd, buf, 1) == 1 && buf[0] == '3');
  CHECK("seek.end", lseek(fd, 0, SEEK_END) == 10);
  CHECK("seek.end.negative", lseek(fd, -4, SEEK_END) == 6 && read(fd, buf, 4) == 4 && memcmp(buf, "6789", 4) == 0);
  CHECK("read.eof", read(fd, buf, sizeof buf) == 0);
  CHECK_ERRNO("seek.before.start", lseek(fd, -11, SEEK_END), EINVAL);
  CHECK_ERRNO("seek.bad.whence", lseek(fd, 0, 42), EINVAL);
  CHECK("seek.unchanged", lseek(fd, 0, SEEK_CUR) == 10);

  // Seeking past the end and writing leaves a zero-filled hole.
  CHECK("seek.past.end", lseek(fd, 12, SEEK_SET) == 12 && write(fd, "X", 1) == 1);
  CHECK("hole.zeros", pread(fd, buf, 3, 10) == 3 && buf[0] == 0 && buf[1] == 0 && buf[2] == 'X');

  // pread/pwrite use their own offset and leave the file offset alone.
  CHECK("pwrite", pwrite(fd, "ab", 2, 1) == 2);
  CHECK("pwrite.offset.kept", lseek(fd, 0, SEEK_CUR) == 13);
  CHECK("pread", pread(fd, buf, 4, 0) == 4 && memcmp(buf, "0ab3", 4) == 0);
  CHECK("pread.offset.kept", lseek(fd, 0, SEEK_CUR) == 13);
  CHECK("pread.past.end", pread(fd, buf, 4, 100) == 0);

  // ftruncate shrinks and grows (with zeros); the offset stays.
  CHECK("ftruncate.shrink", ftruncate(fd, 4) == 0 && lseek(fd, 0, SEEK_END) == 4);
  CHECK("ftruncate.grow", ftruncate(fd, 8) == 0 && pread(fd, buf, 8, 0) == 8 &&
                              memcmp(buf, "0ab3\0\0\0\0", 8) == 0);
  CHECK_ERRNO("ftruncate.negative", ftruncate(fd, -1), EINVAL);

  // fsync and fdatasync succeed on a file.
  CHECK("fsync", fsync(fd) == 0);
  CHECK("fdatasync", fdatasync(fd) == 0);
  CHECK("close.rdwr", close(fd) == 0);

  // A read-only descriptor cannot write or truncate; a write-only one cannot read.
  fd = open("f.txt", O_RDONLY);
  CHECK_ERRNO("rdonly.write", write(fd, "x", 1), EBADF);
  CHECK_ERRNO("rdonly.ftruncate", ftruncate(fd, 0), EBADF);
  close(fd);
  fd = open("f.txt", O_WRONLY);
  CHECK_ERRNO("wronly.read", read(fd, buf, 1), EBADF);
  close(fd);

  // Vectored I/O.
  fd = open("v.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
  struct iovec w[2] = {{"abc", 3}, {"defg", 4}};
  CHECK("writev", writev(fd, w, 2) == 7);
  char a[2], b[8];
  struct iovec r[2] = {{a, 2}, {b, 8}};
  CHECK("readv", lseek(fd, 0, SEEK_SET) == 0 && readv(fd, r, 2) == 7 && memcmp(a, "ab", 2) == 0 &&
                     memcmp(b, "cdefg", 5) == 0);
  close(fd);

  // An unlinked file stays usable through an open descriptor.
  fd = open("gone.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK("unlink.open", fd >= 0 && unlink("gone.txt") == 0);
  CHECK("unlinked.readwrite", write(fd, "still", 5) == 5 && pread(fd, buf, 5, 0) == 5 &&
                                  memcmp(buf, "still", 5) == 0);
  CHECK_ERRNO("unlinked.invisible", open("gone.txt", O_RDONLY), ENOENT);
  close(fd);

  // Output files go back to the host work dir.
  fd = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK("output.file", fd >= 0 && write(fd, "written by the guest\n", 21) == 21 && close(fd) == 0);
  return 0;
}
