#include "admin/code_tool_review.h"

namespace airlock::admin {

using codetools::CodeTool;
using codetools::State;
using nlohmann::json;

const char* VerdictVerb(Verdict v) {
  switch (v) {
    case Verdict::kApprove:
      return "approve";
    case Verdict::kReject:
      return "reject";
    default:
      return "revoke";
  }
}

namespace {

const char* PastTense(Verdict v) {
  return v == Verdict::kApprove ? "approved" : v == Verdict::kReject ? "rejected" : "revoked";
}

}  // namespace

StatusOr<std::optional<CodeTool>> ApprovedSibling(codetools::CodeToolStore& store, const CodeTool& t) {
  AIRLOCK_ASSIGN_OR_RETURN(std::vector<CodeTool> approved, store.List(State::kApproved, t.endpoint));
  for (CodeTool& a : approved) {
    if (a.proposal.name == t.proposal.name && a.id != t.id) return std::optional<CodeTool>(std::move(a));
  }
  return std::optional<CodeTool>();
}

StatusOr<ReviewOutcome> Review(codetools::CodeToolStore& store, audit::AuditLog& log,
                               const governance::Policy& policy, const ReviewRequest& r) {
  const std::string verb = VerdictVerb(r.verdict);
  std::optional<CodeTool> tool;
  auto event = [&](const std::string& decision, const std::string& reason) {
    json detail = {{"decision", decision},
                   {"reason", reason},
                   {"hash", tool ? tool->hash : ""},
                   {"name", tool ? tool->proposal.name : ""}};
    if (!r.via.empty()) detail["via"] = r.via;
    if (tool) {
      detail["endpoint"] = tool->endpoint;
      detail["version"] = tool->version;
    }
    if (r.verdict == Verdict::kApprove) {
      detail["allow_write"] = r.allow_write;
      detail["definer_role"] = r.definer_role;
    }
    return log.Event({.kind = "code_tool_" + verb, .actor = r.actor, .target = r.id, .detail = detail});
  };
  // A refusal is on record (best effort: the refusal stands either way).
  auto deny = [&](Status why) -> Status {
    (void)event("denied", why.message());
    return why;
  };

  if (r.actor.empty()) return InvalidArgument("who is acting? (an admin's user name)");
  StatusOr<CodeTool> got = store.Get(r.id);
  if (!got.ok()) {
    if (got.status().code() == StatusCode::kNotFound) return deny(NotFound("no code tool " + r.id));
    return got.status();
  }
  tool = *got;
  if (!r.actor_is_admin.ok()) {
    return deny(Unavailable("cannot check whether " + r.actor + " is an admin: " + r.actor_is_admin.status().message()));
  }
  if (!*r.actor_is_admin) {
    return deny(PermissionDenied(r.actor + " is not an admin: only an admin may " + verb + " code tools"));
  }
  if (r.verdict != Verdict::kRevoke && tool->proposer == r.actor) {
    return deny(PermissionDenied(r.actor + " proposed " + r.id + " and may not " + verb + " it (someone else must)"));
  }
  const State wanted = r.verdict == Verdict::kRevoke ? State::kApproved : State::kProposed;
  if (tool->state != wanted) {
    return deny(FailedPrecondition(r.id + " is " + codetools::StateName(tool->state) + "; only " +
                                   (r.verdict == Verdict::kRevoke ? "an approved" : "a proposed") +
                                   " version can be " + PastTense(r.verdict)));
  }
  if (r.verdict == Verdict::kApprove && !tool->intact) {
    return deny(PermissionDenied(r.id + ": its stored fields no longer match its hash (edited in the database); "
                                        "it cannot be approved"));
  }
  if (r.verdict == Verdict::kApprove && !r.definer_role.empty() && policy.FindRole(r.definer_role) == nullptr) {
    return deny(InvalidArgument("definer role " + r.definer_role + ": no such role"));
  }
  ReviewOutcome out;
  if (r.verdict == Verdict::kApprove) {
    AIRLOCK_ASSIGN_OR_RETURN(out.superseded, ApprovedSibling(store, *tool));
  }
  if (Status st = event("allowed", r.reason); !st.ok()) {
    return Unavailable("cannot write the audit log (" + st.message() + "); refusing to " + verb);
  }
  Status st;
  switch (r.verdict) {
    case Verdict::kApprove:
      st = store.Approve(r.id, r.actor,
                         {.allow_write = r.allow_write,
                          .run_as_definer = !r.definer_role.empty(),
                          .definer_role = r.definer_role,
                          .reason = r.reason});
      break;
    case Verdict::kReject:
      st = store.Reject(r.id, r.actor, r.reason);
      break;
    default:
      st = store.Revoke(r.id, r.actor, r.reason);
      break;
  }
  if (!st.ok()) {
    // Changed by someone else since it was read: on record as not done.
    (void)event("failed", st.message());
    return st;
  }
  AIRLOCK_ASSIGN_OR_RETURN(out.tool, store.Get(r.id));
  return out;
}

json ToJson(const CodeTool& t, bool with_code) {
  json j = {{"id", t.id},
            {"name", t.proposal.name},
            {"version", t.version},
            {"endpoint", t.endpoint},
            {"state", codetools::StateName(t.state)},
            {"intact", t.intact},
            {"hash", t.hash},
            {"proposer", t.proposer},
            {"proposed_at", t.proposed_at},
            {"decided_by", t.decided_by},
            {"decided_at", t.decided_at},
            {"approved_by", t.approved_by},
            {"approved_at", t.approved_at},
            {"description", t.proposal.description},
            {"language", t.proposal.language},
            {"input_schema", t.proposal.input_schema},
            {"connectors", t.proposal.connectors},
            {"tools", t.proposal.tools},
            {"limits", t.proposal.limits},
            {"approval",
             {{"allow_write", t.approval.allow_write},
              {"run_as_definer", t.approval.run_as_definer},
              {"definer_role", t.approval.definer_role},
              {"reason", t.approval.reason}}},
            {"reason", t.reason}};
  if (with_code) j["code"] = t.proposal.code;
  return j;
}

}  // namespace airlock::admin
