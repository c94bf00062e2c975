#include "base/self_exe.h"

#include <limits.h>
#include <unistd.h>

namespace airlock {

std::string SelfExecutablePath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

std::string SiblingOfSelf(const std::string& name) {
  const std::string self = SelfExecutablePath();
  if (self.empty()) return name;
  return self.substr(0, self.rfind('/') + 1) + name;
}

}  // namespace airlock
