// Times as ISO 8601 UTC text, for JSON answers and listings.
#ifndef AIRLOCK_BASE_TIME_FORMAT_H_
#define AIRLOCK_BASE_TIME_FORMAT_H_

#include <cstdint>
#include <string>

namespace airlock {

// "2026-12-04T12:00:00Z" for Unix milliseconds; with `millis`
// "2026-12-04T12:00:00.123Z".
std::string IsoUtc(int64_t unix_ms, bool millis = false);

}  // namespace airlock

#endif  // AIRLOCK_BASE_TIME_FORMAT_H_
