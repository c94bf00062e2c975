// What every CodeToolStore backend (SqliteCodeToolStore, PgCodeToolStore)
// shares, so that both mean the same thing: the stored form of a version,
// how a read-back row is judged intact (G-D9), how a proposal becomes a new
// version, and the rules of each decision (G-D8).
//
//   AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, NewVersion(proposal, "bob", "team"));  // id, hash, sorted lists
//   ... store t with DumpJson(...) of its JSON fields ...
//   CodeTool back = FromStored(row);              // back.intact: still hashes to its hash
//   AIRLOCK_RETURN_IF_ERROR(CheckApprove(back, "alice"));
#ifndef AIRLOCK_CODETOOLS_CODE_TOOL_ROWS_H_
#define AIRLOCK_CODETOOLS_CODE_TOOL_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "codetools/code_tool_store.h"

namespace airlock::codetools {

// One version's columns as a store keeps them (the table code_tools in
// either backend): JSON fields as text, flags as integers.
struct StoredTool {
  std::string id, endpoint, name;
  int64_t version = 0;
  std::string description, language, code;
  std::string input_schema, connectors, tools, limits;  // JSON text
  std::string hash, state, proposer;
  int64_t proposed_at = 0;
  std::string decided_by;
  int64_t decided_at = 0;
  std::string approved_by;
  int64_t approved_at = 0;
  int64_t allow_write = 0, run_as_definer = 0;
  std::string definer_role, approval_reason, reason;
  bool types_ok = true;  // false: a column held a value of the wrong type
};

// The columns of StoredTool, in its order, for SELECTs.
extern const char kStoredToolColumns[];

// Fills a StoredTool from a row selected with kStoredToolColumns, in that
// order: `text()` and `integer()` each read the next column. The one place
// besides kStoredToolColumns that knows the order; both stores use it.
template <typename TextFn, typename IntegerFn>
StoredTool ReadStoredColumns(TextFn text, IntegerFn integer) {
  StoredTool s;
  s.id = text();
  s.endpoint = text();
  s.name = text();
  s.version = integer();
  s.description = text();
  s.language = text();
  s.code = text();
  s.input_schema = text();
  s.connectors = text();
  s.tools = text();
  s.limits = text();
  s.hash = text();
  s.state = text();
  s.proposer = text();
  s.proposed_at = integer();
  s.decided_by = text();
  s.decided_at = integer();
  s.approved_by = text();
  s.approved_at = integer();
  s.allow_write = integer();
  s.run_as_definer = integer();
  s.definer_role = text();
  s.approval_reason = text();
  s.reason = text();
  return s;
}

// The version a stored row describes. intact = every column reads back as
// written (types_ok, the JSON fields parse to the right shapes, a known
// state) and the hashed fields still hash to the stored hash. An unknown
// state reads as revoked (never active).
CodeTool FromStored(const StoredTool& s);

// A new version of `p`: validated (InvalidArgument as Propose documents),
// connectors and tools sorted and de-duplicated, hashed, with a fresh id
// and state proposed. The store sets version and proposed_at.
StatusOr<CodeTool> NewVersion(const Proposal& p, const std::string& proposer, const std::string& endpoint);

// Compact JSON, ill-formed UTF-8 replaced (the stored form of JSON fields).
std::string DumpJson(const nlohmann::json& j);

std::optional<State> StateFromName(const std::string& name);

// The refusal of Propose when `same` (an identical proposed or approved
// version of the name) exists.
Status DuplicateVersion(const CodeTool& same);

// The errors CodeToolStore's Approve, Reject and Revoke document: first on
// the arguments alone, then on version `t` as read in the deciding
// transaction.
Status CheckApproval(const std::string& actor, const Approval& approval);
Status CheckActor(const std::string& actor, const char* role);  // "rejecter", "revoker"
Status CheckApprove(const CodeTool& t, const std::string& actor);
Status CheckReject(const CodeTool& t, const std::string& actor);
Status CheckRevoke(const CodeTool& t);

// Active(): from the approved versions of one endpoint, the newest per name
// if it is intact, by name. (One approved version per name is normal; should
// a database edit leave several, only the newest counts and it must be intact.)
std::vector<CodeTool> NewestIntactPerName(std::vector<CodeTool> approved);

}  // namespace airlock::codetools

#endif  // AIRLOCK_CODETOOLS_CODE_TOOL_ROWS_H_
