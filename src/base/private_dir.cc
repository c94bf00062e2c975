#include "base/private_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace airlock {

StatusOr<std::unique_ptr<PrivateDir>> PrivateDir::Create(const std::string& prefix, const std::string& parent) {
  std::string base = parent;
  if (base.empty()) {
    const char* tmpdir = std::getenv("TMPDIR");
    base = tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
  }
  std::string path_template = base + "/" + prefix + "-XXXXXX";
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
