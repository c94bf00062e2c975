#include "codetools/code_tool_rows.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>

namespace airlock::codetools {
namespace {

using nlohmann::json;

StatusOr<std::string> NewId() {
  unsigned char bytes[6];
  size_t done = 0;
  while (done < sizeof bytes) {
    const ssize_t got = getrandom(bytes + done, sizeof bytes - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoError("getrandom");
    done += static_cast<size_t>(got);
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string id = "ct_";
  for (unsigned char b : bytes) {
    id.push_back(kDigits[b >> 4]);
    id.push_back(kDigits[b & 15]);
  }
  return id;
}

// A JSON column; nullopt if it does not parse.
std::optional<json> ParseJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// A JSON array of strings; nullopt for anything else.
std::optional<std::vector<std::string>> ParseStrings(const std::string& text) {
  std::optional<json> j = ParseJson(text);
  if (!j || !j->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const json& e : *j) {
    if (!e.is_string()) return std::nullopt;
    out.push_back(e.get<std::string>());
  }
  return out;
}

// Sorted, unique: the stored form of connectors and tools.
std::vector<std::string> SortedUnique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

const char kStoredToolColumns[] =
    "id, endpoint, name, version, description, language, code, input_schema, connectors, tools, limits, hash, "
    "state, proposer, proposed_at, decided_by, decided_at, approved_by, approved_at, allow_write, run_as_definer, "
    "definer_role, approval_reason, reason";

std::optional<State> StateFromName(const std::string& s) {
  for (State st : {State::kProposed, State::kApproved, State::kRejected, State::kRevoked, State::kSuperseded}) {
    if (s == StateName(st)) return st;
  }
  return std::nullopt;
}

std::string DumpJson(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

CodeTool FromStored(const StoredTool& s) {
  CodeTool t;
  t.id = s.id;
  t.endpoint = s.endpoint;
  t.proposal.name = s.name;
  t.version = s.version;
  t.proposal.description = s.description;
  t.proposal.language = s.language;
  t.proposal.code = s.code;
  t.hash = s.hash;
  t.proposer = s.proposer;
  t.proposed_at = s.proposed_at;
  t.decided_by = s.decided_by;
  t.decided_at = s.decided_at;
  t.approved_by = s.approved_by;
  t.approved_at = s.approved_at;
  t.approval.allow_write = s.allow_write != 0;
  t.approval.run_as_definer = s.run_as_definer != 0;
  t.approval.definer_role = s.definer_role;
  t.approval.reason = s.approval_reason;
  t.reason = s.reason;

  std::optional<json> schema_json = ParseJson(s.input_schema), limits_json = ParseJson(s.limits);
  std::optional<std::vector<std::string>> connector_list = ParseStrings(s.connectors),
                                          tool_list = ParseStrings(s.tools);
  t.proposal.input_schema = schema_json ? *schema_json : json(s.input_schema);
  t.proposal.limits = limits_json ? *limits_json : json(s.limits);
  if (connector_list) t.proposal.connectors = *connector_list;
  if (tool_list) t.proposal.tools = *tool_list;
  std::optional<State> state = StateFromName(s.state);
  t.state = state.value_or(State::kRevoked);  // an unknown state is never active
  t.intact = s.types_ok && state && schema_json && limits_json && connector_list && tool_list && !t.hash.empty() &&
             HashOf(t.proposal) == t.hash;
  return t;
}

StatusOr<CodeTool> NewVersion(const Proposal& p, const std::string& proposer, const std::string& endpoint) {
  AIRLOCK_RETURN_IF_ERROR(ValidateProposal(p));
  if (proposer.empty()) return InvalidArgument("proposer: empty");
  if (endpoint.empty()) return InvalidArgument("endpoint: empty");
  CodeTool t;
  t.proposal = p;
  t.proposal.connectors = SortedUnique(p.connectors);
  t.proposal.tools = SortedUnique(p.tools);
  t.hash = HashOf(t.proposal);
  t.endpoint = endpoint;
  t.proposer = proposer;
  t.state = State::kProposed;
  AIRLOCK_ASSIGN_OR_RETURN(t.id, NewId());
  return t;
}

Status DuplicateVersion(const CodeTool& same) {
  return InvalidArgument("an identical version of " + same.proposal.name + " is already " + StateName(same.state) +
                         " (" + same.id + ", version " + std::to_string(same.version) + ")");
}

Status CheckApproval(const std::string& actor, const Approval& approval) {
  if (actor.empty()) return InvalidArgument("approver: empty");
  if (approval.run_as_definer && approval.definer_role.empty()) {
    return InvalidArgument("run_as_definer needs a definer_role");
  }
  return OkStatus();
}

Status CheckActor(const std::string& actor, const char* role) {
  if (actor.empty()) return InvalidArgument(std::string(role) + ": empty");
  return OkStatus();
}

Status CheckApprove(const CodeTool& t, const std::string& actor) {
  if (t.proposer == actor) return PermissionDenied(actor + " proposed " + t.id + " and cannot approve it");
  if (t.state != State::kProposed) {
    return FailedPrecondition(t.id + " is " + StateName(t.state) + "; only a proposed version can be approved");
  }
  if (!t.intact) {
    return FailedPrecondition(t.id + ": its stored fields no longer match its hash (edited in the database)");
  }
  return OkStatus();
}

Status CheckReject(const CodeTool& t, const std::string& actor) {
  if (t.proposer == actor) return PermissionDenied(actor + " proposed " + t.id + " and cannot reject it");
  if (t.state != State::kProposed) {
    return FailedPrecondition(t.id + " is " + StateName(t.state) + "; only a proposed version can be rejected");
  }
  return OkStatus();
}

Status CheckRevoke(const CodeTool& t) {
  if (t.state != State::kApproved) {
    return FailedPrecondition(t.id + " is " + StateName(t.state) + "; only an approved version can be revoked");
  }
  return OkStatus();
}

std::vector<CodeTool> NewestIntactPerName(std::vector<CodeTool> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const CodeTool& a, const CodeTool& b) {
    return a.proposal.name != b.proposal.name ? a.proposal.name < b.proposal.name : a.version > b.version;
  });
  std::vector<CodeTool> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i].proposal.name == rows[i - 1].proposal.name) continue;
    if (rows[i].intact) out.push_back(std::move(rows[i]));
  }
  return out;
}

}  // namespace airlock::codetools
