#include "base/self_exe.h"

#include <limits.h>
#include <stdlib.h>
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
  const std::string dir = self.substr(0, self.rfind('/') + 1);
  // An installed airlock: /usr/bin/airlock with its helpers in /usr/lib/airlock/.
  const std::string installed = dir + "../lib/airlock/" + name;
  if (access((dir + name).c_str(), F_OK) != 0 && access(installed.c_str(), F_OK) == 0) {
    char resolved[PATH_MAX];
    if (realpath(installed.c_str(), resolved) != nullptr) return resolved;
  }
  return dir + name;
}

}  // namespace airlock
