// The console's proposals and code-tools pages: list, one version with its
// code and the diff against what it supersedes, approve / reject / revoke
// through admin::Review (the CLI's rules: admins only, no self-approval,
// every attempt audited).
#include <httplib.h>

#include "admin/code_tool_review.h"
#include "console/console_http.h"
#include "console/console_reply.h"

namespace airlock::console {

using codetools::CodeTool;
using codetools::State;
using nlohmann::json;

namespace {

constexpr size_t kMaxReasonBytes = 4096;

std::optional<State> StateNamed(const std::string& name) {
  for (State s : {State::kProposed, State::kApproved, State::kRejected, State::kRevoked, State::kSuperseded}) {
    if (name == codetools::StateName(s)) return s;
  }
  return std::nullopt;
}

}  // namespace

void ConsoleHttp::Tools(const Call& c) {
  if (deps_.code_tools == nullptr) return ReplyError(c.res, 503, "code tools are not available on this server");
  std::optional<State> state;
  if (const std::string name = c.req.get_param_value("state"); !name.empty()) {
    state = StateNamed(name);
    if (!state) return ReplyError(c.res, 400, "state: expected proposed, approved, rejected, revoked or superseded");
  }
  StatusOr<std::vector<CodeTool>> list = deps_.code_tools->List(state, c.req.get_param_value("endpoint"));
  if (!list.ok()) return ReplyStatus(c.res, list.status());
  json tools = json::array();
  for (const CodeTool& t : *list) tools.push_back(admin::ToJson(t, /*with_code=*/false));
  ReplyJson(c.res, 200, {{"tools", std::move(tools)}});
}

void ConsoleHttp::ToolDetail(const Call& c) {
  if (deps_.code_tools == nullptr) return ReplyError(c.res, 503, "code tools are not available on this server");
  StatusOr<CodeTool> t = deps_.code_tools->Get(c.path[1]);
  if (!t.ok()) return ReplyStatus(c.res, t.status());
  StatusOr<std::optional<CodeTool>> from = admin::ApprovedSibling(*deps_.code_tools, *t);
  if (!from.ok()) return ReplyStatus(c.res, from.status());
  ReplyJson(c.res, 200,
            {{"tool", admin::ToJson(*t, /*with_code=*/true)},
             {"supersedes", *from ? admin::ToJson(**from, /*with_code=*/false) : json(nullptr)},
             {"diff", codetools::DiffVersions(*from ? &**from : nullptr, *t)}});
}

void ConsoleHttp::ToolVerdict(const Call& c) {
  if (deps_.code_tools == nullptr || deps_.audit == nullptr || deps_.policy == nullptr) {
    return ReplyError(c.res, 503, "code tools are not available on this server");
  }
  std::optional<json> body = JsonBody(c.req, c.res);
  if (!body) return;
  std::optional<std::string> reason = StringField(*body, "reason", kMaxReasonBytes, c.res);
  if (!reason) return;
  std::optional<std::string> definer = StringField(*body, "definer_role", 64, c.res);
  if (!definer) return;
  bool allow_write = false;
  if (auto it = body->find("allow_write"); it != body->end() && !it->is_null()) {
    if (!it->is_boolean()) return ReplyError(c.res, 400, "allow_write: expected true or false");
    allow_write = it->get<bool>();
  }
  const std::string& verb = c.path[2];
  const admin::Verdict verdict = verb == "approve"  ? admin::Verdict::kApprove
                                 : verb == "reject" ? admin::Verdict::kReject
                                                    : admin::Verdict::kRevoke;
  if (verdict == admin::Verdict::kReject && reason->empty()) {
    return ReplyError(c.res, 400, "reason: say why it is rejected (the proposer reads it)");
  }
  const governance::Role* role = deps_.policy->FindRole(c.session.who.role);
  StatusOr<admin::ReviewOutcome> done =
      admin::Review(*deps_.code_tools, *deps_.audit, *deps_.policy,
                    {.id = c.path[1],
                     .actor = c.session.who.user,
                     .actor_is_admin = role != nullptr && role->admin,
                     .verdict = verdict,
                     .allow_write = allow_write,
                     .definer_role = *definer,
                     .reason = *reason,
                     .via = "console"});
  if (!done.ok()) return ReplyStatus(c.res, done.status());
  ReplyJson(c.res, 200,
            {{"tool", admin::ToJson(done->tool, /*with_code=*/false)},
             {"superseded", done->superseded ? json(done->superseded->id) : json(nullptr)}});
}

}  // namespace airlock::console
