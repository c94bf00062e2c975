// Symbolic and hard links. The VFS has no links: symlink() and link() are
// refused (ENOTSUP) and leave nothing behind, so no link can point outside
// a preopen; readlink() of a file or directory is EINVAL; lstat sees the
// plain node. ".." may move inside a preopen but never past its root.
// Runs with a writable --work dir as the cwd.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conformance.h"

int main(void) {
  struct stat st;
  char buf[256];
  int fd = open("target.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK("create", fd >= 0 && write(fd, "t", 1) == 1 && close(fd) == 0);
  CHECK("mkdir", mkdir("sub", 0755) == 0);

  CHECK_ERRNO("symlink.inside", symlink("target.txt", "link"), ENOTSUP);
  CHECK_ERRNO("symlink.absolute.outside", symlink("/etc/passwd", "abs-link"), ENOTSUP);
  CHECK_ERRNO("symlink.dotdot.outside", symlink("../../etc/passwd", "sub/up-link"), ENOTSUP);
  CHECK_ERRNO("symlink.left.nothing", lstat("abs-link", &st), ENOENT);
  CHECK_ERRNO("symlink.left.nothing.sub", lstat("sub/up-link", &st), ENOENT);
  CHECK_ERRNO("symlink.linkpath.escape", symlink("target.txt", "../escape-link"), ENOTSUP);
  CHECK_ERRNO("link.hard", link("target.txt", "hard"), ENOTSUP);
  CHECK_ERRNO("link.left.nothing", stat("hard", &st), ENOENT);

  CHECK_ERRNO("readlink.file", readlink("target.txt", buf, sizeof buf), EINVAL);
  CHECK_ERRNO("readlink.dir", readlink("sub", buf, sizeof buf), EINVAL);
  CHECK_ERRNO("readlink.missing", readlink("nothing", buf, sizeof buf), ENOENT);
  CHECK_ERRNO("readlink.escape", readlink("../../etc/passwd", buf, sizeof buf), ENOTCAPABLE);
  CHECK("lstat.plain", lstat("target.txt", &st) == 0 && S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode));

  // ".." inside the preopen is fine; past its root it is refused.
  CHECK("dotdot.inside", stat("sub/../target.txt", &st) == 0 && S_ISREG(st.st_mode));
  CHECK("dotdot.inside.work", stat("/work/sub/../target.txt", &st) == 0 && S_ISREG(st.st_mode));
  CHECK_ERRNO("dotdot.past.root", stat("sub/../../target.txt", &st), ENOTCAPABLE);
  CHECK_ERRNO("dotdot.past.work", stat("/work/../etc/passwd", &st), ENOTCAPABLE);
  CHECK_ERRNO("dotdot.open.past.root", open("../target.txt", O_RDONLY), ENOTCAPABLE);
  CHECK_ERRNO("dotdot.create.past.root", open("sub/../../new.txt", O_WRONLY | O_CREAT, 0644), ENOTCAPABLE);
  CHECK_ERRNO("dotdot.mkdir.past.root", mkdir("../newdir", 0755), ENOTCAPABLE);
  CHECK_ERRNO("dotdot.rename.past.root", rename("target.txt", "../moved.txt"), ENOTCAPABLE);
  CHECK_ERRNO("dotdot.unlink.past.root", unlink("../target.txt"), ENOTCAPABLE);
  CHECK("target.intact", stat("target.txt", &st) == 0 && st.st_size == 1);
  return 0;
}
