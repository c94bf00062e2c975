// Directories: mkdir, rmdir (ENOTEMPTY), readdir (a small listing, many
// entries over several fd_readdir calls, telldir/seekdir, removal while
// listing), rename (file, over an existing file, directory) and unlink.
// Runs with a writable --work dir as the cwd.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conformance.h"

#define MANY 300

static int touch(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

// Counts the entries of `path` other than "." and ".."; -1 on error.
static int count_entries(const char* path, int* dots) {
  DIR* d = opendir(path);
  if (!d) return -1;
  int n = 0;
  *dots = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
      ++*dots;
    } else {
      ++n;
    }
  }
  closedir(d);
  return n;
}

int main(void) {
  struct stat st;
  int dots = 0;

  // mkdir and its errors.
  CHECK("mkdir", mkdir("d", 0755) == 0 && stat("d", &st) == 0 && S_ISDIR(st.st_mode));
  CHECK("mkdir.nested", mkdir("d/sub", 0755) == 0);
  CHECK_ERRNO("mkdir.exists", mkdir("d", 0755), EEXIST);
  CHECK_ERRNO("mkdir.missing.parent", mkdir("no/such", 0755), ENOENT);
  CHECK("touch.file", touch("d/file", "x") == 0);
  CHECK_ERRNO("mkdir.over.file", mkdir("d/file", 0755), EEXIST);
  CHECK_ERRNO("mkdir.under.file", mkdir("d/file/x", 0755), ENOTDIR);

  // A small listing: ".", "..", and every entry with its type.
  DIR* dir = opendir("d");
  CHECK("opendir", dir != NULL);
  int seen_file = 0, seen_sub = 0, seen_dot = 0, seen_dotdot = 0, other = 0;
  struct dirent* e;
  while ((e = readdir(dir)) != NULL) {
    if (strcmp(e->d_name, "file") == 0) {
      seen_file += e->d_type == DT_REG;
    } else if (strcmp(e->d_name, "sub") == 0) {
      seen_sub += e->d_type == DT_DIR;
    } else if (strcmp(e->d_name, ".") == 0) {
      ++seen_dot;
    } else if (strcmp(e->d_name, "..") == 0) {
      ++seen_dotdot;
    } else {
      ++other;
    }
  }
  closedir(dir);
  CHECK("readdir.small", seen_file == 1 && seen_sub == 1 && seen_dot == 1 && seen_dotdot == 1 && other == 0);
  CHECK_ERRNO("opendir.file", opendir("d/file") == NULL ? -1 : 0, ENOTDIR);
  CHECK_ERRNO("opendir.missing", opendir("nope") == NULL ? -1 : 0, ENOENT);

  // rmdir: not on a non-empty directory, nor a file.
  CHECK_ERRNO("rmdir.notempty", rmdir("d"), ENOTEMPTY);
  CHECK_ERRNO("rmdir.file", rmdir("d/file"), ENOTDIR);
  CHECK_ERRNO("rmdir.missing", rmdir("d/none"), ENOENT);
  CHECK("rmdir.empty", rmdir("d/sub") == 0 && stat("d/sub", &st) == -1 && errno == ENOENT);

  // unlink: files only.
  CHECK_ERRNO("unlink.dir", unlink("d"), EISDIR);
  CHECK_ERRNO("unlink.missing", unlink("d/none"), ENOENT);
  CHECK("unlink", unlink("d/file") == 0 && stat("d/file", &st) == -1 && errno == ENOENT);
  CHECK("rmdir.now.empty", rmdir("d") == 0);

  // Many entries with long names: wasi-libc reads them in 4 KiB batches, so
  // listing them takes several fd_readdir calls resumed by cookie.
  CHECK("mkdir.many", mkdir("many", 0755) == 0);
  char path[128];
  int created = 0;
  for (int i = 0; i < MANY; ++i) {
    snprintf(path, sizeof path, "many/entry-with-a-rather-long-name-%04d", i);
    created += touch(path, "") == 0;
  }
  CHECK("create.many", created == MANY);
  dir = opendir("many");
  static unsigned char seen[MANY];
  memset(seen, 0, sizeof seen);
  int total = 0, dups = 0, bad = 0;
  while ((e = readdir(dir)) != NULL) {
    int i = -1;
    if (sscanf(e->d_name, "entry-with-a-rather-long-name-%d", &i) == 1 && i >= 0 && i < MANY) {
      dups += seen[i]++ != 0;
      ++total;
    } else if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      ++bad;
    }
  }
  CHECK("readdir.many", total == MANY && dups == 0 && bad == 0);

  // telldir/seekdir: back to a remembered position.
  rewinddir(dir);
  for (int i = 0; i < 150; ++i) readdir(dir);
  long pos = telldir(dir);
  e = readdir(dir);
  char name[256];
  snprintf(name, sizeof name, "%s", e ? e->d_name : "");
  for (int i = 0; i < 40; ++i) readdir(dir);
  seekdir(dir, pos);
  e = readdir(dir);
  CHECK("seekdir", e != NULL && strcmp(e->d_name, name) == 0);
  rewinddir(dir);
  int again = 0;
  while (readdir(dir) != NULL) ++again;
  CHECK("rewinddir", again == MANY + 2);
  closedir(dir);

  // Removing entries while listing (what `rm -r` does): every entry that
  // was not removed yet is still listed exactly once.
  dir = opendir("many");
  int removed = 0;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "many/%s", e->d_name);
    if (unlink(path) == 0) ++removed;
  }
  closedir(dir);
  CHECK("readdir.while.removing", removed == MANY && count_entries("many", &dots) == 0 && dots == 2);
  CHECK("rmdir.many", rmdir("many") == 0);

  // rename: a file, over an existing file, a directory, and the errors.
  CHECK("rename.file", touch("a", "A") == 0 && rename("a", "b") == 0 && content_is("b", "A") &&
                           stat("a", &st) == -1 && errno == ENOENT);
  CHECK("rename.over.existing", touch("c", "C") == 0 && rename("b", "c") == 0 && content_is("c", "A") &&
                                    stat("b", &st) == -1);
  CHECK("rename.dir", mkdir("d1", 0755) == 0 && touch("d1/in", "I") == 0 && rename("d1", "d2") == 0 &&
                          content_is("d2/in", "I") && stat("d1", &st) == -1);
  CHECK("rename.into.subdir", mkdir("d3", 0755) == 0 && rename("c", "d3/c") == 0 && content_is("d3/c", "A"));
  CHECK("rename.dir.over.empty.dir", mkdir("empty", 0755) == 0 && rename("d3", "empty") == 0 &&
                                         content_is("empty/c", "A"));
  CHECK("rename.same", rename("empty/c", "empty/c") == 0 && content_is("empty/c", "A"));
  CHECK_ERRNO("rename.dir.over.nonempty", rename("d2", "empty"), ENOTEMPTY);
  CHECK_ERRNO("rename.file.over.dir", rename("empty/c", "d2"), EISDIR);
  CHECK_ERRNO("rename.dir.over.file", rename("d2", "empty/c"), ENOTDIR);
  CHECK_ERRNO("rename.into.itself", rename("d2", "d2/inner"), EINVAL);
  CHECK_ERRNO("rename.missing", rename("nope", "x"), ENOENT);
  return 0;
}
