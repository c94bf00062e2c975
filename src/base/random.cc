#include "base/random.h"

#include <sys/random.h>

#include <cerrno>

namespace airlock {

StatusOr<std::string> RandomBytes(size_t n) {
  std::string out(n, '\0');
  size_t done = 0;
  while (done < n) {
    const ssize_t got = getrandom(out.data() + done, n - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoError("getrandom");
    done += static_cast<size_t>(got);
  }
  return out;
}

StatusOr<std::string> RandomHex(size_t n) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string raw, RandomBytes(n));
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * n);
  for (unsigned char b : raw) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 15]);
  }
  return hex;
}

}  // namespace airlock
