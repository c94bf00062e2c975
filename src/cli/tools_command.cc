// `airlock tools list|show|diff|approve|reject|revoke`: an admin reviews the
// code tools agents proposed (codetools/code_tool_store.h).
//
// Exit codes: 0 ok, 1 store/IO error (audit log included), 2 bad usage or
// unknown id, 3 denied (not an admin, one's own proposal, a tampered version).
// Every approve/reject/revoke attempt that names a user is written to the
// audit log, denied ones included; with audit.fail_closed an allowed action
// whose audit event cannot be written is refused before the store changes.
#include <errno.h>
#include <sys/stat.h>
#include <time.h>

#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "admin/code_tool_review.h"
#include "audit/audit_log.h"
#include "base/terminal_text.h"
#include "cli/admin_identity.h"
#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "codetools/code_tool_store.h"
#include "config/config.h"
#include "governance/policy.h"
#include "state/state_stores.h"

namespace airlock::cli {
namespace {

using codetools::CodeTool;
using codetools::CodeToolStore;
using codetools::State;
using nlohmann::json;

constexpr int kOk = 0, kStoreError = 1, kUsage = 2, kDenied = 3;

struct ToolsOptions {
  std::string config_path;
  std::string state_dir;
  std::string status;    // list
  std::string endpoint;  // list
  bool json = false;     // list, show
  std::string id;        // show, diff, approve, reject, revoke
  std::string actor;     // --as
  bool allow_write = false;
  std::string definer;
  std::string reason;
};

enum class Action { kList, kShow, kDiff, kApprove, kReject, kRevoke };

const char* ActionName(Action a) {
  switch (a) {
    case Action::kApprove:
      return "approve";
    case Action::kReject:
      return "reject";
    case Action::kRevoke:
      return "revoke";
    default:
      return "";
  }
}

const char* PastTense(Action a) {
  return a == Action::kApprove ? "approved" : a == Action::kReject ? "rejected" : "revoked";
}

int Fail(int code, const std::string& message) {
  std::cerr << "airlock tools: " << TerminalText(message, TextShape::kBlock) << "\n";
  return code;
}

std::string Time(int64_t ms) {
  if (ms == 0) return "-";
  const time_t secs = static_cast<time_t>(ms / 1000);
  struct tm tm;
  char buf[32];
  if (gmtime_r(&secs, &tm) == nullptr || strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return "?";
  return buf;
}

std::string Dump(const json& j, int indent = -1) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

// Agent-controlled text for the terminal (base/terminal_text.h): one line,
// or a block (description, code, diff) that keeps its newlines and tabs.
std::string L(const std::string& s) { return TerminalText(s, TextShape::kLine); }
std::string B(const std::string& s) { return TerminalText(s, TextShape::kBlock); }

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + L(x);
  return s;
}

std::string Pad(const std::string& s, size_t width) { return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' '); }

void PrintList(const std::vector<CodeTool>& tools) {
  std::cout << Pad("ID", 16) << Pad("NAME", 24) << Pad("VER", 5) << Pad("ENDPOINT", 12) << Pad("STATE", 11)
            << Pad("PROPOSER", 12) << "DECIDED BY\n";
  for (const CodeTool& t : tools) {
    std::cout << Pad(L(t.id), 16) << Pad(L(t.proposal.name), 24) << Pad(std::to_string(t.version), 5)
              << Pad(L(t.endpoint), 12) << Pad(codetools::StateName(t.state), 11) << Pad(L(t.proposer), 12)
              << (t.decided_by.empty() ? "-" : L(t.decided_by)) << (t.intact ? "" : "  TAMPERED") << "\n";
  }
}

void PrintShow(const CodeTool& t) {
  std::cout << "id:           " << L(t.id) << "\n"
            << "name:         " << L(t.proposal.name) << " (version " << t.version << ")\n"
            << "endpoint:     " << L(t.endpoint) << "\n"
            << "state:        " << codetools::StateName(t.state) << "\n"
            << "intact:       "
            << (t.intact ? "yes" : "NO: the stored fields no longer match the hash (edited in the database)") << "\n"
            << "hash:         " << L(t.hash) << "\n"
            << "proposed:     by " << L(t.proposer) << " at " << Time(t.proposed_at) << "\n";
  if (!t.approved_by.empty()) {
    std::cout << "approved:     by " << L(t.approved_by) << " at " << Time(t.approved_at)
              << (t.approval.reason.empty() ? "" : " (" + L(t.approval.reason) + ")") << "\n"
              << "allow_write:  " << (t.approval.allow_write ? "yes" : "no") << "\n"
              << "runs as:      "
              << (t.approval.run_as_definer ? "definer role " + L(t.approval.definer_role) : std::string("the caller"))
              << "\n";
  }
  if (t.state == State::kRejected || t.state == State::kRevoked) {
    std::cout << codetools::StateName(t.state) << ":     by " << L(t.decided_by) << " at " << Time(t.decided_at)
              << (t.reason.empty() ? "" : " (" + L(t.reason) + ")") << "\n";
  }
  std::cout << "language:     " << L(t.proposal.language) << "\n"
            << "connectors:   " << Joined(t.proposal.connectors) << "\n"
            << "tools:        "
            << (t.proposal.tools.empty() ? "(every tool of the declared connectors)" : Joined(t.proposal.tools))
            << "\n"
            << "limits:       " << B(Dump(t.proposal.limits)) << "\n"
            << "description:\n"
            << B(t.proposal.description) << (t.proposal.description.empty() ? "" : "\n") << "input_schema:\n"
            << B(Dump(t.proposal.input_schema, 2)) << "\n"
            << "code:\n"
            << B(t.proposal.code) << (t.proposal.code.empty() || t.proposal.code.back() == '\n' ? "" : "\n");
}

int ExitCodeOf(const Status& st) {
  switch (st.code()) {
    case StatusCode::kPermissionDenied:
      return kDenied;
    case StatusCode::kNotFound:
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return kUsage;
    default:
      return kStoreError;
  }
}

// approve / reject / revoke through admin::Review, the console's rules too.
int Decide(const ToolsOptions& o, Action action, const config::Config& config, CodeToolStore& store) {
  const std::string verb = ActionName(action);
  StatusOr<governance::Policy> policy = governance::Policy::FromJson(config.roles, config.endpoints, config.access);
  if (!policy.ok()) return Fail(kUsage, "configuration: " + policy.status().message());
  StatusOr<std::unique_ptr<audit::AuditLog>> log = audit::AuditLog::Open(config);
  if (!log.ok()) {
    return Fail(kStoreError, "the audit log is unavailable (" + log.status().message() + "); refusing to " + verb);
  }
  admin::ReviewRequest request{.id = o.id,
                               .actor = o.actor,
                               .actor_is_admin = IsAdminUser(config, *policy, o.actor),
                               .verdict = action == Action::kApprove  ? admin::Verdict::kApprove
                                          : action == Action::kReject ? admin::Verdict::kReject
                                                                      : admin::Verdict::kRevoke,
                               .allow_write = o.allow_write,
                               .definer_role = o.definer,
                               .reason = o.reason,
                               .via = "cli"};
  StatusOr<admin::ReviewOutcome> done = admin::Review(store, **log, *policy, request);
  if (!done.ok()) return Fail(ExitCodeOf(done.status()), done.status().message());
  const CodeTool& tool = done->tool;
  std::cerr << PastTense(action) << " " << L(o.id) << " (" << L(tool.endpoint) << "/" << L(tool.proposal.name)
            << " version " << tool.version << ")";
  if (done->superseded) {
    std::cerr << "; it supersedes " << L(done->superseded->id) << " (version " << done->superseded->version << ")";
  }
  std::cerr << "\n";
  return kOk;
}

int Run(const ToolsOptions& o, Action action) {
  StatusOr<config::Config> config = LoadConfigOrDefault(o.config_path);
  if (!config.ok()) return Fail(kUsage, config.status().message());
  if (!o.state_dir.empty()) config->server.state_dir = o.state_dir;

  std::optional<State> status;
  if (action == Action::kList && !o.status.empty()) {
    for (State s : {State::kProposed, State::kApproved, State::kRejected, State::kRevoked, State::kSuperseded}) {
      if (o.status == codetools::StateName(s)) status = s;
    }
    if (!status) {
      return Fail(kUsage, "--status " + o.status + ": expected proposed, approved, rejected, revoked or superseded");
    }
  }
  if (action != Action::kList && o.id.empty()) return Fail(kUsage, "which code tool? (an id, see `airlock tools list`)");
  if ((action == Action::kApprove || action == Action::kReject || action == Action::kRevoke) && o.actor.empty()) {
    return Fail(kUsage, "--as USER is required: who is acting (recorded in the audit log)");
  }

  StatusOr<std::unique_ptr<CodeToolStore>> store = state::OpenCodeToolStore(*config);
  if (!store.ok()) return Fail(kStoreError, store.status().message());

  switch (action) {
    case Action::kList: {
      StatusOr<std::vector<CodeTool>> list = (*store)->List(status, o.endpoint);
      if (!list.ok()) return Fail(kStoreError, list.status().message());
      if (o.json) {
        json j = json::array();
        for (const CodeTool& t : *list) j.push_back(admin::ToJson(t, /*with_code=*/false));
        std::cout << Dump(j, 2) << std::endl;
      } else {
        PrintList(*list);
      }
      return kOk;
    }
    case Action::kShow:
    case Action::kDiff: {
      StatusOr<CodeTool> t = (*store)->Get(o.id);
      if (!t.ok()) return Fail(ExitCodeOf(t.status()), t.status().message());
      if (action == Action::kShow) {
        if (o.json) {
          std::cout << Dump(admin::ToJson(*t, /*with_code=*/true), 2) << std::endl;
        } else {
          PrintShow(*t);
        }
        return kOk;
      }
      StatusOr<std::optional<CodeTool>> from = admin::ApprovedSibling(**store, *t);
      if (!from.ok()) return Fail(kStoreError, from.status().message());
      std::cout << B(codetools::DiffVersions(*from ? &**from : nullptr, *t));
      return kOk;
    }
    default:
      return Decide(o, action, *config, **store);
  }
}

}  // namespace

Subcommand AddToolsCommand(CLI::App& parent) {
  auto o = std::make_shared<ToolsOptions>();
  CLI::App* tools = parent.add_subcommand("tools", "Review stored code tools (list, show, diff, approve, reject, revoke)");
  tools->add_option("--config", o->config_path, "Configuration file (JSON); defaults are embedded");
  tools->add_option("--state-dir", o->state_dir, "State directory (overrides server.state_dir)");

  CLI::App* list = tools->add_subcommand("list", "List code tool versions, newest first");
  list->add_option("--status", o->status, "Only this state: proposed, approved, rejected, revoked, superseded");
  list->add_option("--endpoint", o->endpoint, "Only this endpoint");
  list->add_flag("--json", o->json, "JSON output");
  CLI::App* show = tools->add_subcommand("show", "Show one version, code included");
  show->add_flag("--json", o->json, "JSON output");
  CLI::App* diff = tools->add_subcommand("diff", "Diff a version against the approved version of the same tool");
  CLI::App* approve = tools->add_subcommand("approve", "Approve a proposed version (admins; not one's own)");
  approve->add_flag("--allow-write", o->allow_write, "It may call write tools (where the caller's role may write)");
  approve->add_option("--definer", o->definer, "Check its calls against this role instead of the caller's");
  CLI::App* reject = tools->add_subcommand("reject", "Reject a proposed version (admins; not one's own)");
  CLI::App* revoke = tools->add_subcommand("revoke", "Revoke an approved version (admins)");
  for (CLI::App* sub : {show, diff, approve, reject, revoke}) {
    sub->add_option("id", o->id, "The version's id (ct_...)");
  }
  for (CLI::App* sub : {approve, reject, revoke}) {
    sub->add_option("--as", o->actor, "Who is acting: an admin (recorded in the audit log)");
    sub->add_option("--reason", o->reason, "Why (recorded with the decision and in the audit log)");
  }
  for (CLI::App* sub : {list, show, diff, approve, reject, revoke}) sub->fallthrough();  // --config anywhere

  Subcommand s;
  s.app = tools;
  s.run = [o, tools, list, show, diff, approve, reject, revoke]() {
    const std::pair<CLI::App*, Action> subs[] = {{list, Action::kList},       {show, Action::kShow},
                                                 {diff, Action::kDiff},       {approve, Action::kApprove},
                                                 {reject, Action::kReject},   {revoke, Action::kRevoke}};
    for (const auto& [app, action] : subs) {
      if (*app) return Run(*o, action);
    }
    std::cerr << tools->help();
    return kUsage;
  };
  return s;
}

}  // namespace airlock::cli
