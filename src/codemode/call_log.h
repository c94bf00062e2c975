// The record of every bridge request of one code-mode run, in arrival order:
// what the audit log (codemode.md §6.5 AU2, §7 G10 code_run_calls) and the
// execute tool's result are made from.
//
//   CallLog log(limits.max_calls + CallLog::kExtraRecords);
//   CallRecord rec{.op = "call", .name = "crm.get_contact"};
//   log.Add(rec);                 // assigns rec.seq
//   rec.decision = "allowed"; ...
//   log.Update(rec);              // replaces the stored record with that seq
//
// A program may keep sending requests past max_calls (each is denied), so at
// most `max_records` are kept; later ones are only counted. Thread-safe.
#ifndef AIRLOCK_CODEMODE_CALL_LOG_H_
#define AIRLOCK_CODEMODE_CALL_LOG_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace airlock::codemode {

// One bridge request. Only op, name, decision and error_code may be shown to
// the caller: `reason`, and connector/tool of a "not_declared" denial, would
// tell an undeclared tool from an unknown one.
struct CallRecord {
  uint64_t seq = 0;        // arrival order, from 1
  std::string op;          // "search" | "describe" | "call"
  std::string name;        // as the program sent it (the query for search), cut to 200 bytes
  std::string connector, tool, effective_class;  // empty if unknown
  std::string decision;    // "allowed" or "denied"
  std::string error_code;  // "" on success, else E_...
  // Internal reason for denials, never shown to the program: "call_limit",
  // "invalid_name", "invalid_args", "args_too_large", "unknown_tool",
  // "not_declared", "write_not_allowed", "schema", "deadline", "run_ended".
  std::string reason;
  uint64_t args_bytes = 0, result_bytes = 0;
  uint64_t duration_ms = 0;  // arrival to reply (includes waiting in the queue)
  std::string args_sha256;   // of the serialized args (calls only)
  nlohmann::json args_redacted;  // audit::RedactArgs(args) (calls only; never the raw args)
};

class CallLog {
 public:
  // Records kept beyond max_calls (the denied excess).
  static constexpr size_t kExtraRecords = 1000;

  explicit CallLog(size_t max_records) : max_records_(max_records) {}

  // Gives `rec` the next seq and keeps a copy (if there is room).
  void Add(CallRecord& rec);
  // Replaces the kept record with rec.seq; a denial is counted either way.
  // Call once per state change (allowed, then possibly denied).
  void Update(const CallRecord& rec);

  std::vector<CallRecord> records() const;
  uint32_t total() const;
  uint32_t denied() const;

 private:
  const size_t max_records_;
  mutable std::mutex mu_;
  std::vector<CallRecord> records_;  // records_[seq - 1]
  uint64_t next_seq_ = 1;
  uint32_t unkept_denied_ = 0;
};

}  // namespace airlock::codemode

#endif  // AIRLOCK_CODEMODE_CALL_LOG_H_
