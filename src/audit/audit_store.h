// The audit log: what ran, who ran it, and every call it made (issue 5,
// research codemode.md §6.5 AU1-AU4 and §7 G10). Groundwork: not wired into
// the server yet.
//
// AuditStore is the interface callers use; SqliteAuditStore (the default, a
// file under the state dir) and PgAuditStore (a PostgreSQL database several
// gateways share) implement it with one hash chain (audit_chain.h);
// state/state_stores.h opens the configured one. Rows are append-only and tamper-evident: Verify() reports the first
// row that was edited or deleted after it was written.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<AuditStore> audit,
//                            SqliteAuditStore::Open(state_dir + "/audit.db"));
//   RunRecord run{.run_id = "r_1", .user = "alice", .role = "analyst", ...};
//   AIRLOCK_RETURN_IF_ERROR(audit->AppendCall({.run_id = "r_1", .seq = 1, ...,
//       .args_redacted = RedactArgs(args)}));
//   AIRLOCK_RETURN_IF_ERROR(audit->AppendRun(run));   // refuse the run if this fails
//   AIRLOCK_ASSIGN_OR_RETURN(auto rows, audit->Query({.user = "alice", .limit = 50}));
//   AIRLOCK_ASSIGN_OR_RETURN(VerifyReport report, audit->Verify());
//   if (!report.ok()) std::cerr << report.problem->ToString();
//
// Secrets never belong in a row: pass call arguments through RedactArgs()
// (redaction.h) and never store keys, tokens or connector credentials.
// Times are Unix milliseconds. All methods are thread-safe.
#ifndef AIRLOCK_AUDIT_AUDIT_STORE_H_
#define AIRLOCK_AUDIT_AUDIT_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace airlock::audit {

// One code-mode run (inline program or stored code tool), written when it ends.
struct RunRecord {
  std::string run_id;
  int64_t started_at = 0, ended_at = 0, duration_ms = 0;
  std::string user, role;
  std::string endpoint;           // the named endpoint the request came in on
  std::string client;             // MCP clientInfo "name/version"
  std::string kind;               // "inline" | "code_tool"
  std::string tool_version_hash;  // code tools only: the approved hash
  std::string language;           // "javascript" | "python"
  std::string code_sha256;
  std::string code;
  nlohmann::json connectors = nlohmann::json::array();  // declared connectors
  nlohmann::json limits = nlohmann::json::object();     // the limits in force
  std::string status;             // SUCCESS, ERROR, TIMEOUT, LIMIT, DENIED, CANCELLED
  std::string error_code;         // "" or E_...
  int64_t calls_total = 0, calls_denied = 0;
  int64_t console_bytes = 0, result_bytes = 0;
};

// One bridged call of a run, denied ones included (codemode::CallRecord).
struct CallRow {
  std::string run_id;
  int64_t seq = 0;                 // from 1, in arrival order
  std::string connector, tool;
  std::string effective_class;     // "read" | "write" | "" (unknown)
  std::string decision;            // "allowed" | "denied"
  std::string reason;              // internal denial reason, "" if allowed
  std::string args_sha256;         // of the serialized, unredacted args
  nlohmann::json args_redacted;    // RedactArgs(args), never the raw args
  std::string result_status;       // ok, is_error, protocol_error, timeout
  int64_t result_bytes = 0, duration_ms = 0;
};

// Anything that is not a run: a direct tool call, an admin action (keys,
// proposals, approvals), a configuration change.
struct EventRow {
  int64_t at = 0;                  // when it happened
  std::string kind;                // e.g. "tool_call", "key_create", "approve"
  std::string actor;               // the user who did it
  std::string target;              // what it was done to (tool, key id, proposal id)
  nlohmann::json detail = nlohmann::json::object();  // redacted specifics
};

// A stored row as Query() returns it.
struct AuditRow {
  int64_t id = 0;           // position in the chain (one sequence for all kinds)
  int64_t recorded_at = 0;  // when the store wrote it
  std::variant<RunRecord, CallRow, EventRow> row;

  const RunRecord* run() const { return std::get_if<RunRecord>(&row); }
  const CallRow* call() const { return std::get_if<CallRow>(&row); }
  const EventRow* event() const { return std::get_if<EventRow>(&row); }
};

// Filters are ANDed; empty/zero means "any".
struct AuditQuery {
  int64_t since = 0;   // rows recorded at or after this time
  std::string user{};  // runs of this user, the calls of those runs, events whose actor is this user
  std::string run_id{};  // this run, its calls and the events whose target it is
  int64_t limit = 1000;  // the newest `limit` matching rows (must be > 0)
  int64_t until = 0;     // rows recorded before this time; 0: no bound
  // Run filters: runs with this endpoint / language / status and the calls
  // of those runs; any of them set leaves out events.
  std::string endpoint{};
  std::string language{};
  std::string status{};
  std::string type{};    // "run" | "call" | "event": rows of that kind only; "": all
};

struct VerifyProblem {
  enum class Kind {
    kModified,  // the row's content no longer matches its hash
    kDeleted,   // rows are missing: a gap in ids, a prev_hash that does not
                // match the row before it, or fewer rows than the chain head says
  };
  Kind kind = Kind::kModified;
  std::string table;  // where the broken row is ("runs", "calls", "events", "head")
  int64_t id = 0;     // its id (for a deleted tail: the first missing id)
  std::string detail;

  // "modified: calls id 7: row_hash does not match its content".
  std::string ToString() const;
};

struct VerifyReport {
  int64_t rows_checked = 0;
  int64_t last_id = 0;
  std::string head_hash;  // hash of the last row: anchor it elsewhere to catch a rewritten tail
  std::optional<VerifyProblem> problem;  // the first broken row, if any

  bool ok() const { return !problem.has_value(); }
};

class AuditStore {
 public:
  virtual ~AuditStore() = default;

  // Each Append* writes one row durably or returns an error (the caller
  // decides whether to refuse the run: fail closed by default).
  virtual Status AppendRun(const RunRecord& run) = 0;
  virtual Status AppendCall(const CallRow& call) = 0;
  virtual Status AppendEvent(const EventRow& event) = 0;
  // A finished run: its calls (in order), then the run row. Stores that can
  // make it one atomic, durable write should (one fsync instead of one per
  // row); the default appends the rows one by one.
  virtual Status AppendRunWithCalls(const RunRecord& run, const std::vector<CallRow>& calls) {
    for (const CallRow& call : calls) AIRLOCK_RETURN_IF_ERROR(AppendCall(call));
    return AppendRun(run);
  }

  // Matching rows in chain order (oldest first).
  virtual StatusOr<std::vector<AuditRow>> Query(const AuditQuery& query) = 0;

  // Walks the whole chain. An error status means the store could not be
  // read; a readable but tampered store gives a report with a problem.
  virtual StatusOr<VerifyReport> Verify() = 0;
};

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_AUDIT_STORE_H_
