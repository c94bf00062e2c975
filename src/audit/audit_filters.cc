#include "audit/audit_filters.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "base/time_format.h"

namespace airlock::audit {

namespace {

constexpr size_t kMaxFilterBytes = 256;
constexpr int64_t kMaxLimit = 100000;

StatusOr<int64_t> Time(const char* name, const std::string& text, int64_t now_ms) {
  if (text.empty()) return int64_t{0};
  std::optional<int64_t> t = ParseTimeSpec(text, now_ms);
  if (!t) {
    return InvalidArgument(std::string(name) +
                           ": expected Unix milliseconds, an ISO-8601 UTC time (2026-12-02, "
                           "2026-12-02T10:00:00Z) or a relative time (30s, 15m, 2h, 7d)");
  }
  return *t;
}

// The statuses a run row is written with (run_code_tool.cc AuditStatusOfRun,
// program_run.cc AuditStatusOf).
constexpr const char* kRunStatuses[] = {"SUCCESS", "ERROR", "TIMEOUT", "LIMIT", "DENIED", "CANCELLED"};

std::string Cased(std::string s, int (*convert)(int)) {
  std::transform(s.begin(), s.end(), s.begin(), [convert](unsigned char c) { return static_cast<char>(convert(c)); });
  return s;
}

}  // namespace

StatusOr<AuditQuery> ToQuery(const AuditFilters& f, int64_t now_ms) {
  const std::pair<const char*, const std::string*> texts[] = {
      {"since", &f.since},       {"until", &f.until},   {"user", &f.user},     {"run_id", &f.run_id},
      {"endpoint", &f.endpoint}, {"language", &f.language}, {"status", &f.status}, {"type", &f.type},
      {"limit", &f.limit}};
  for (const auto& [name, value] : texts) {
    if (value->size() > kMaxFilterBytes) return InvalidArgument(std::string(name) + ": too long");
  }
  AuditQuery q;
  AIRLOCK_ASSIGN_OR_RETURN(q.since, Time("since", f.since, now_ms));
  AIRLOCK_ASSIGN_OR_RETURN(q.until, Time("until", f.until, now_ms));
  if (q.until != 0 && q.since >= q.until) return InvalidArgument("since must be before until");
  // Enumerations are matched whatever their case: --status success, --type RUN.
  const std::string type = Cased(f.type, ::tolower);
  if (!type.empty() && type != "run" && type != "call" && type != "event") {
    return InvalidArgument("type: expected run, call or event");
  }
  const std::string status = Cased(f.status, ::toupper);
  if (!status.empty() && std::find_if(std::begin(kRunStatuses), std::end(kRunStatuses), [&](const char* s) {
                           return status == s;
                         }) == std::end(kRunStatuses)) {
    return InvalidArgument("status: expected one of SUCCESS, ERROR, TIMEOUT, LIMIT, DENIED, CANCELLED (any case)");
  }
  if (!f.limit.empty()) {
    int64_t limit = 0;
    for (char c : f.limit) {
      if (c < '0' || c > '9' || limit > kMaxLimit) return InvalidArgument("limit: expected 1 to 100000");
      limit = limit * 10 + (c - '0');
    }
    if (limit < 1 || limit > kMaxLimit) return InvalidArgument("limit: expected 1 to 100000");
    q.limit = limit;
  }
  q.user = f.user;
  q.run_id = f.run_id;
  q.endpoint = f.endpoint;
  q.language = f.language;
  q.status = status;
  q.type = type;
  return q;
}

}  // namespace airlock::audit
