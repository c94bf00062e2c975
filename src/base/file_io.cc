#include "base/file_io.h"

#include <unistd.h>

#include <cerrno>

namespace airlock {

StatusOr<size_t> PreadFull(int fd, char* buf, size_t len, uint64_t offset) {
  size_t got = 0;
  while (got < len) {
    const ssize_t n = ::pread(fd, buf + got, len - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("pread");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

Status WriteFull(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write");
    if (n == 0) return ErrnoError("write", EIO);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

}  // namespace airlock
