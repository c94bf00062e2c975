// Reviewing proposed code tools: approve, reject, revoke. One implementation
// of the rules for every way an operator acts (`airlock tools ...` and the
// console's /console/api/tools), so neither is weaker than the other:
//
//  - only an admin acts (the caller says whether `actor` is one: the CLI
//    from the key store and policy, the console from the signed-in key);
//  - nobody approves or rejects their own proposal;
//  - only a proposed version is approved or rejected, only an approved one
//    revoked; a version whose stored fields no longer match its hash is
//    never approved; a definer role must exist;
//  - every attempt is an audit event "code_tool_<verb>" with decision
//    allowed / denied / failed, the reason, the tool's hash and who acted
//    through what ("via"); with audit.fail_closed an allowed change whose
//    event cannot be written is refused before the store changes.
//
//   ReviewRequest r{.id = "ct_...", .actor = "alice", .actor_is_admin = true,
//                   .verdict = Verdict::kApprove, .allow_write = true, .via = "console"};
//   StatusOr<ReviewOutcome> done = Review(store, log, policy, r);
//   // PermissionDenied: not an admin, one's own proposal, a tampered version
//   // NotFound: no such id; FailedPrecondition: wrong state;
//   // InvalidArgument: no such definer role; Unavailable: the audit log.
#ifndef AIRLOCK_ADMIN_CODE_TOOL_REVIEW_H_
#define AIRLOCK_ADMIN_CODE_TOOL_REVIEW_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "base/status.h"
#include "codetools/code_tool_store.h"
#include "governance/policy.h"

namespace airlock::admin {

enum class Verdict { kApprove, kReject, kRevoke };
const char* VerdictVerb(Verdict v);  // "approve", "reject", "revoke"

struct ReviewRequest {
  std::string id;
  std::string actor;
  // Whether `actor` is an admin, or why that could not be checked (an
  // unreadable key store): then nothing is decided, and the refusal is on record.
  StatusOr<bool> actor_is_admin = false;
  Verdict verdict = Verdict::kApprove;
  bool allow_write = false;   // approve
  std::string definer_role;   // approve: check its calls against this role ("": the caller's)
  std::string reason;
  std::string via;            // "cli" | "console": recorded in the audit event
};

struct ReviewOutcome {
  codetools::CodeTool tool;                         // as stored after the change
  std::optional<codetools::CodeTool> superseded;    // approve: the version it replaced
};

StatusOr<ReviewOutcome> Review(codetools::CodeToolStore& store, audit::AuditLog& log,
                               const governance::Policy& policy, const ReviewRequest& request);

// The newest approved version of t's endpoint and name other than t itself:
// the version `t` would supersede (what a diff compares it with).
StatusOr<std::optional<codetools::CodeTool>> ApprovedSibling(codetools::CodeToolStore& store,
                                                              const codetools::CodeTool& t);

// Every field of a version (code only `with_code`): `airlock tools list|show
// --json` and the console's API answer the same.
nlohmann::json ToJson(const codetools::CodeTool& t, bool with_code);

}  // namespace airlock::admin

#endif  // AIRLOCK_ADMIN_CODE_TOOL_REVIEW_H_
