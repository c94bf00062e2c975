// The audit log's hash chain, shared by every AuditStore backend
// (SqliteAuditStore, PgAuditStore) so that a row hashes, and Verify()
// judges a chain, the same way whatever holds it.
//
// ONE chain across three tables: every row gets the next `id` of a single
// sequence (1, 2, 3, ... whatever its table) and stores
//   prev_hash = row_hash of row id-1   (GenesisHash(), 64 '0's, for id 1)
//   row_hash  = hex sha256(prev_hash || canonical)
// where `canonical` is the compact JSON object of the row's columns with
// keys sorted, plus "table" ("runs" | "calls" | "events"), "id" and
// "recorded_at"; JSON-valued fields (connectors, limits, args_redacted,
// detail) appear as the exact text stored. A head row keeps the id and hash
// of the last row.
//
//   std::vector<AuditValue> values = ValuesOf(event);
//   std::optional<std::string> canonical = CanonicalRow(EventsTable(), id, recorded_at, values);
//   const std::string row_hash = ChainHash(prev_hash, *canonical);
//
//   ChainVerifier v;                       // rows in id order, from any store
//   while (more rows && v.Add(table, id, recorded_at, values, types_ok, prev_hash, row_hash)) {}
//   VerifyReport report = v.Finish(has_head, head_id, head_hash);
#ifndef AIRLOCK_AUDIT_AUDIT_CHAIN_H_
#define AIRLOCK_AUDIT_AUDIT_CHAIN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "audit/audit_store.h"

namespace airlock::audit {

// A column's value: INTEGER or TEXT (JSON fields as their text).
using AuditValue = std::variant<int64_t, std::string>;

// One table of the chain.
struct ChainTable {
  size_t index;          // 0 runs, 1 calls, 2 events: the order of ChainTables()
  const char* kind;      // "runs" | "calls" | "events": in canonical JSON and reports
  const char* sql_name;  // "audit_runs", "audit_calls", "audit_events"
  // The row's own columns in order (after id and recorded_at, before
  // prev_hash and row_hash): name, true if INTEGER.
  std::vector<std::pair<const char*, bool>> columns;
};

const std::vector<ChainTable>& ChainTables();
inline const ChainTable& RunsTable() { return ChainTables()[0]; }
inline const ChainTable& CallsTable() { return ChainTables()[1]; }
inline const ChainTable& EventsTable() { return ChainTables()[2]; }

// A row's column values in ChainTable::columns order. Text is made valid
// UTF-8 (ill-formed sequences become U+FFFD) and JSON is serialized.
std::vector<AuditValue> ValuesOf(const RunRecord& run);
std::vector<AuditValue> ValuesOf(const CallRow& call);
std::vector<AuditValue> ValuesOf(const EventRow& event);

// The row that `values` (read back from `table`) describe. A JSON field
// whose text does not parse comes back as that text (a JSON string).
std::variant<RunRecord, CallRow, EventRow> RowFromValues(const ChainTable& table,
                                                         const std::vector<AuditValue>& values);

// prev_hash of the first row.
const std::string& GenesisHash();

// The text whose hash (after prev_hash) is the row's row_hash; nullopt if a
// value cannot be serialized (ill-formed UTF-8 written behind our back).
std::optional<std::string> CanonicalRow(const ChainTable& table, int64_t id, int64_t recorded_at,
                                        const std::vector<AuditValue>& values);

// hex sha256(prev_hash || canonical).
std::string ChainHash(const std::string& prev_hash, const std::string& canonical);

// Checks stored rows fed in id order (ties: ChainTables() order) and
// reports the first
//   - modified row: its content does not hash to its row_hash, a column
//     holds a value of the wrong type, or an id appears twice;
//   - deleted row(s): a gap in ids, a prev_hash that differs from the
//     previous row's row_hash, or a head that names a later id than the
//     last row (a head that names an earlier id or another hash: modified).
class ChainVerifier {
 public:
  // One stored row. `types_ok` false: a column held a value of the wrong
  // type. Returns false once a problem was found (feed no more rows).
  bool Add(const ChainTable& table, int64_t id, int64_t recorded_at, const std::vector<AuditValue>& values,
           bool types_ok, const std::string& prev_hash, const std::string& row_hash);
  // After the last row: checks the head row (has_head false: it is missing).
  VerifyReport Finish(bool has_head, int64_t head_id, const std::string& head_hash);

 private:
  VerifyReport report_;
  std::string prev_ = GenesisHash();
  int64_t expected_ = 1;
};

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_AUDIT_CHAIN_H_
