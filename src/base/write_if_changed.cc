#include "base/write_if_changed.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace airlock {

Status WriteIfChanged(const std::filesystem::path& path, std::string_view content) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      const std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (have == content) return OkStatus();
    }
  }
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out.flush()) return Internal("cannot write " + tmp.string());
  }
  if (chmod(tmp.c_str(), 0644) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    errno = e;
    return ErrnoError("install " + path.string());
  }
  return OkStatus();
}

}  // namespace airlock
