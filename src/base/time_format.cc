#include "base/time_format.h"

#include <cstdio>
#include <ctime>
#include <optional>

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

// `count` decimal digits of `s` at `pos`, or -1.
static int Digits(const std::string& s, size_t pos, size_t count) {
  if (pos + count > s.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

std::optional<int64_t> ParseIsoUtc(const std::string& s) {
  if (s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  struct tm tm = {};
  const int year = Digits(s, 0, 4), month = Digits(s, 5, 2), day = Digits(s, 8, 2);
  int hour = 0, minute = 0, second = 0, millis = 0;
  if (year < 1970 || month < 1 || month > 12 || day < 1) return std::nullopt;
  if (s.size() > 10) {
    if (s[10] != 'T' || s.back() != 'Z' || s.size() < 17 || s[13] != ':') return std::nullopt;
    hour = Digits(s, 11, 2);
    minute = Digits(s, 14, 2);
    size_t pos = 16;
    if (s[pos] == ':') {
      second = Digits(s, pos + 1, 2);
      if (second < 0) return std::nullopt;
      pos += 3;
      if (s[pos] == '.') {
        size_t digits = 0;
        for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, ++digits) {
          if (digits < 3) millis = millis * 10 + (s[pos] - '0');
        }
        if (digits == 0) return std::nullopt;
        for (; digits < 3; ++digits) millis *= 10;
      }
    }
    if (pos != s.size() - 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
        second > 59) {
      return std::nullopt;
    }
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const time_t t = timegm(&tm);
  struct tm check;
  if (t == static_cast<time_t>(-1) || gmtime_r(&t, &check) == nullptr || check.tm_mday != day ||
      check.tm_mon != month - 1) {
    return std::nullopt;  // 2026-02-30
  }
  return static_cast<int64_t>(t) * 1000 + millis;
}

std::optional<int64_t> ParseTimeSpec(const std::string& when, int64_t now_ms) {
  if (when.empty() || when.size() > 30) return std::nullopt;
  size_t digits = 0;
  while (digits < when.size() && when[digits] >= '0' && when[digits] <= '9') ++digits;
  if (digits == when.size() && digits <= 15) return std::stoll(when);
  if (digits > 0 && digits <= 9 && digits + 1 == when.size()) {
    const int64_t n = std::stoll(when.substr(0, digits));
    switch (when.back()) {
      case 's': return now_ms - n * 1000;
      case 'm': return now_ms - n * 60'000;
      case 'h': return now_ms - n * 3'600'000;
      case 'd': return now_ms - n * 86'400'000;
      default: return std::nullopt;
    }
  }
  return ParseIsoUtc(when);
}

}  // namespace airlock
