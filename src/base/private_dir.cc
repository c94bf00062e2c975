#include "base/private_dir.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace airlock {

namespace {

// The pid in "<prefix>-<pid>-XXXXXX", or 0.
pid_t OwnerPid(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix + "-", 0) != 0) return 0;
  const size_t start = prefix.size() + 1;
  const size_t dash = name.find('-', start);
  if (dash == std::string::npos || dash == start || dash - start > 9) return 0;
  pid_t pid = 0;
  for (size_t i = start; i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid;
}

// Removes `base`'s directories of `prefix` that this user owns and whose
// process is gone (a runner killed before its destructor ran).
void RemoveAbandoned(const std::string& base, const std::string& prefix) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
    const pid_t pid = OwnerPid(e.path().filename().string(), prefix);
    if (pid <= 0 || pid == getpid()) continue;
    struct stat st{};
    if (lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code rm;
    std::filesystem::remove_all(e.path(), rm);
  }
}

}  // namespace

StatusOr<std::unique_ptr<PrivateDir>> PrivateDir::Create(const std::string& prefix, const std::string& parent) {
  std::string base = parent;
  if (base.empty()) {
    const char* tmpdir = std::getenv("TMPDIR");
    base = tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
  }
  RemoveAbandoned(base, prefix);
  std::string path_template = base + "/" + prefix + "-" + std::to_string(getpid()) + "-XXXXXX";
  std::vector<char> buf(path_template.begin(), path_template.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) return ErrnoError("mkdtemp " + path_template);
  std::string path(buf.data());
  // mkdtemp makes it 0700 already; say so whatever the umask did.
  if (chmod(path.c_str(), 0700) != 0) {
    const Status st = ErrnoError("chmod " + path);
    rmdir(path.c_str());
    return st;
  }
  return std::unique_ptr<PrivateDir>(new PrivateDir(std::move(path)));
}

PrivateDir::~PrivateDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace airlock
