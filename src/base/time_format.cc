#include "base/time_format.h"

#include <cstdio>
#include <ctime>

namespace airlock {

std::string IsoUtc(int64_t unix_ms, bool millis) {
  const time_t secs = static_cast<time_t>(unix_ms / 1000);
  tm utc{};
  char buf[32];
  if (gmtime_r(&secs, &utc) == nullptr || strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc) == 0) {
    return std::to_string(unix_ms);
  }
  if (!millis) return std::string(buf) + "Z";
  char out[48];
  snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(unix_ms % 1000));
  return out;
}

}  // namespace airlock
