#include "jail/init/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "base/unique_fd.h"

namespace airlock::jail {
namespace {

int OpenBeneath(int dir_fd, const std::string& path, uint64_t flags, uint64_t mode = 0) {
  open_how how{};
  how.flags = flags | O_CLOEXEC | O_NOFOLLOW;
  how.mode = mode;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  return static_cast<int>(syscall(SYS_openat2, dir_fd, path.c_str(), &how, sizeof how));
}

bool MatchesGlob(const std::string& rel, const std::string& glob) {
  if (glob.rfind("**/", 0) == 0) {
    const std::string rest = glob.substr(3);
    const std::string base = rel.substr(rel.rfind('/') + 1);
    return fnmatch(rest.c_str(), base.c_str(), FNM_PATHNAME) == 0 ||
           fnmatch(rest.c_str(), rel.c_str(), FNM_PATHNAME) == 0;
  }
  return fnmatch(glob.c_str(), rel.c_str(), FNM_PATHNAME) == 0;
}

}  // namespace

bool OutputGlobMatches(const std::string& rel, const std::string& glob) { return MatchesGlob(rel, glob); }

bool IsSafeRelativePath(const std::string& name) {
  if (name.empty() || name.size() > 4096 || name[0] == '/') return false;
  if (name.find('\0') != std::string::npos) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part.size() > 255) return false;
    start = end + 1;
  }
  return true;
}

Status WriteInputFiles(int dir_fd, const std::vector<FileEntry>& files) {
  for (const FileEntry& f : files) {
    if (!IsSafeRelativePath(f.name)) return InvalidArgument("unsafe file name: " + f.name);
    for (size_t pos = f.name.find('/'); pos != std::string::npos; pos = f.name.find('/', pos + 1)) {
      const std::string parent = f.name.substr(0, pos);
      UniqueFd d(OpenBeneath(dir_fd, parent, O_PATH | O_DIRECTORY));
      if (!d && mkdirat(dir_fd, parent.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoError("mkdir " + parent);
      }
    }
    UniqueFd fd(OpenBeneath(dir_fd, f.name, O_WRONLY | O_CREAT | O_TRUNC, f.executable ? 0755 : 0644));
    if (!fd) return ErrnoError("create " + f.name);
    size_t off = 0;
    while (off < f.content.size()) {
      ssize_t n = write(fd.get(), f.content.data() + off, f.content.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoError("write " + f.name);
      off += static_cast<size_t>(n);
    }
  }
  return OkStatus();
}

CollectedOutputs CollectOutputFiles(int dir_fd, const std::vector<std::string>& globs,
                                    const OutputFileLimits& limits) {
  CollectedOutputs out;
  uint64_t budget = limits.max_total_bytes;  // bytes still allowed to be read
  size_t visited = 0;
  constexpr size_t kMaxVisited = 20000;
  auto note = [](std::vector<FileNote>* list, const std::string& name, uint64_t size, const char* reason) {
    if (list->size() < kMaxFileNotes) list->push_back({name, size, reason});
  };
  std::function<void(const std::string&, int)> walk = [&](const std::string& rel_dir, int depth) {
    if (depth > 16) return;
    UniqueFd d(rel_dir.empty() ? openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                               : OpenBeneath(dir_fd, rel_dir, O_RDONLY | O_DIRECTORY));
    if (!d) return;
    DIR* dir = fdopendir(d.Release());
    if (!dir) return;
    while (dirent* e = readdir(dir)) {
      if (++visited > kMaxVisited) break;
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      const std::string rel = rel_dir.empty() ? e->d_name : rel_dir + "/" + e->d_name;
      struct stat st;
      if (fstatat(dir_fd, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        walk(rel, depth + 1);
        continue;
      }
      if (!S_ISREG(st.st_mode)) continue;  // symlinks, fifos, sockets, devices
      bool wanted = false;
      for (const auto& g : globs) wanted = wanted || MatchesGlob(rel, g);
      if (!wanted) {
        note(&out.left, rel, static_cast<uint64_t>(st.st_size), "not_requested");
        continue;
      }
      if (out.files.size() >= limits.max_files) {
        note(&out.skipped, rel, static_cast<uint64_t>(st.st_size), "max_output_files");
        continue;
      }
      UniqueFd f(OpenBeneath(dir_fd, rel, O_RDONLY | O_NONBLOCK));
      if (!f) continue;
      struct stat fst;
      if (fstat(f.get(), &fst) != 0 || !S_ISREG(fst.st_mode)) continue;
      const uint64_t size = static_cast<uint64_t>(fst.st_size);
      const uint64_t want = std::min<uint64_t>(size, limits.max_file_bytes);
      if (want > budget) {  // not read at all: the rest of the budget may fit a smaller file
        note(&out.skipped, rel, size, "max_output_files_total_bytes");
        continue;
      }
      CollectedFile cf;
      cf.name = rel;
      cf.size = size;
      cf.content.resize(want);
      uint64_t got = 0;
      while (got < want) {
        ssize_t n = read(f.get(), cf.content.data() + got, want - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<uint64_t>(n);
      }
      cf.content.resize(got);
      cf.truncated = cf.size > got;
      budget -= got;
      out.files.push_back(std::move(cf));
    }
    closedir(dir);
  };
  walk("", 0);
  return out;
}

}  // namespace airlock::jail
