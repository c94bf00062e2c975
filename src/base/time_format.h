// Times as ISO 8601 UTC text, for JSON answers and listings, and back.
#ifndef AIRLOCK_BASE_TIME_FORMAT_H_
#define AIRLOCK_BASE_TIME_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>

namespace airlock {

// "2026-12-04T12:00:00Z" for Unix milliseconds; with `millis`
// "2026-12-04T12:00:00.123Z".
std::string IsoUtc(int64_t unix_ms, bool millis = false);

// "YYYY-MM-DD", "YYYY-MM-DDTHH:MMZ" or "YYYY-MM-DDTHH:MM:SS[.fff]Z" (UTC)
// as Unix ms; nullopt for anything else (2026-02-30 included).
std::optional<int64_t> ParseIsoUtc(const std::string& s);

// A time as an operator writes it (`airlock audit --since`, the console's
// audit filters): Unix ms, an ISO 8601 UTC time (ParseIsoUtc), or a
// relative "30s" / "15m" / "2h" / "7d" ago counted from `now_ms`.
std::optional<int64_t> ParseTimeSpec(const std::string& when, int64_t now_ms);

}  // namespace airlock

#endif  // AIRLOCK_BASE_TIME_FORMAT_H_
