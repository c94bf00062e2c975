// The host is invisible: absolute host paths name nothing (the guest's "/"
// is the work dir), ".." cannot leave a preopen, and only the preopens
// exist. Runs with a writable --work dir (holding input.txt) and the tar at
// /lib.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conformance.h"

int main(void) {
  struct stat st;
  CHECK_ERRNO("etc.passwd", open("/etc/passwd", O_RDONLY), ENOENT);
  CHECK_ERRNO("etc", stat("/etc", &st), ENOENT);
  CHECK_ERRNO("proc.self", stat("/proc/self/status", &st), ENOENT);
  CHECK_ERRNO("dev.null", open("/dev/null", O_RDONLY), ENOENT);
  CHECK_ERRNO("tmp", stat("/tmp", &st), ENOENT);
  CHECK_ERRNO("dotdot.etc.passwd", open("../../etc/passwd", O_RDONLY), ENOTCAPABLE);
  CHECK_ERRNO("dotdot.many", open("../../../../../../../../etc/passwd", O_RDONLY), ENOTCAPABLE);
  CHECK_ERRNO("root.dotdot", open("/../etc/passwd", O_RDONLY), ENOTCAPABLE);
  CHECK_ERRNO("work.dotdot", open("/work/../../etc/passwd", O_RDONLY), ENOTCAPABLE);
  CHECK_ERRNO("lib.dotdot", open("/lib/../../etc/passwd", O_RDONLY), ENOTCAPABLE);
  CHECK_ERRNO("lib.dotdot.work", stat("/lib/../work/input.txt", &st), ENOTCAPABLE);
  CHECK_ERRNO("create.dotdot", open("../escaped.txt", O_WRONLY | O_CREAT, 0644), ENOTCAPABLE);
  CHECK_ERRNO("opendir.dotdot", opendir("..") == NULL ? -1 : 0, ENOTCAPABLE);

  // "/" is the work dir: what the runner copied in, and nothing of the host.
  CHECK("input.visible", stat("/input.txt", &st) == 0 && stat("/work/input.txt", &st) == 0 &&
                             stat("input.txt", &st) == 0 && st.st_size == 6);
  DIR* d = opendir("/");
  int entries = 0, host = 0;
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    ++entries;
    if (strcmp(e->d_name, "etc") == 0 || strcmp(e->d_name, "proc") == 0 || strcmp(e->d_name, "usr") == 0) ++host;
  }
  if (d) closedir(d);
  CHECK("root.is.work", d != NULL && entries == 1 && host == 0);

  // Overlong paths and names are refused, not truncated.
  static char longname[300];
  memset(longname, 'n', 299);
  CHECK_ERRNO("name.too.long", open(longname, O_WRONLY | O_CREAT, 0644), ENAMETOOLONG);
  static char longpath[5000];
  for (int i = 0; i < 4998; i += 2) memcpy(longpath + i, "a/", 2);
  CHECK("path.too.long", open(longpath, O_RDONLY) == -1 && (errno == ENAMETOOLONG || errno == ENOENT));
  return 0;
}
