// Audit rows and verify reports as JSON: what `airlock audit --json`,
// `airlock audit verify --json` and the console's /console/api/audit answer.
// The same fields, so a script written against one reads the other.
//
//   for (const AuditRow& row : rows) out.push_back(RowJson(row));
//   std::cout << VerifyJson(report).dump(2);
//
// Call arguments appear only as stored: redacted (redaction.h).
#ifndef AIRLOCK_AUDIT_AUDIT_JSON_H_
#define AIRLOCK_AUDIT_AUDIT_JSON_H_

#include <nlohmann/json.hpp>

#include "audit/audit_store.h"

namespace airlock::audit {

// {id, recorded_at, type: "run"|"call"|"event", ...the row's fields}.
nlohmann::json RowJson(const AuditRow& row);

// {ok, rows_checked, last_id, head_hash, problem?: {kind, table, id, detail, message}}.
nlohmann::json VerifyJson(const VerifyReport& report);

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_AUDIT_JSON_H_
