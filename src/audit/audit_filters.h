// An audit query as an operator writes it: the filters of `airlock audit`
// and of the console's audit page, all text, checked and turned into an
// AuditQuery in one place so both accept exactly the same things.
//
//   AuditFilters f{.since = "2h", .user = "bob", .status = "ERROR"};
//   AIRLOCK_ASSIGN_OR_RETURN(AuditQuery q, ToQuery(f, NowMs()));
//   AIRLOCK_ASSIGN_OR_RETURN(auto rows, store->Query(q));
#ifndef AIRLOCK_AUDIT_AUDIT_FILTERS_H_
#define AIRLOCK_AUDIT_AUDIT_FILTERS_H_

#include <cstdint>
#include <string>

#include "audit/audit_store.h"
#include "base/status.h"

namespace airlock::audit {

struct AuditFilters {
  std::string since, until;  // base/time_format.h ParseTimeSpec: Unix ms, ISO 8601 UTC, or 15m/2h/7d ago
  std::string user, run_id, endpoint, language;
  std::string status;         // "" | SUCCESS, ERROR, TIMEOUT, LIMIT, DENIED, CANCELLED (any case)
  std::string type;           // "" | "run" | "call" | "event" (any case)
  std::string limit;          // "" (1000) or 1..100000
};

// InvalidArgument naming the filter ("until: expected ...") for a bad time,
// status, type or limit, a value longer than 256 bytes, or since >= until.
// Status and type are matched whatever their case.
StatusOr<AuditQuery> ToQuery(const AuditFilters& filters, int64_t now_ms);

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_AUDIT_FILTERS_H_
