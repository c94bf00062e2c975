// The session tools (docs/sessions.md): open_session, close_session,
// list_sessions, and the checkpoint tools pause_session, resume_session and
// fork_session. Cells run through run_code with a session_id
// (run_code_tool.cc). Each caller sees and uses only the sessions it
// opened (sessions::SessionRegistry, keyed by the caller's identity; an
// anonymous HTTP caller is one MCP session).
//
//   open_session {language, isolation?, timeout_s?, memory_mb?}
//     -> {session_id, language, isolation, idle_timeout_s, expires_at, ...}
//   close_session {session_id} -> {session_id, closed: true}
//   list_sessions {} -> {sessions: [...]}
//   pause_session {session_id} -> {session_id, paused: true}
//   resume_session {session_id} -> {session_id, paused: false}
//   fork_session {session_id} -> open_session's result for the copy, plus forked_from
// Refusals are tool errors whose structuredContent is {status:
// "internal_error", error_code, message}:
// E_SESSION_NOT_FOUND, E_SESSION_LIMIT, unknown_language, invalid_request,
// runner_unavailable; from the checkpoint tools also E_SESSION_NOT_PAUSABLE
// (only the WASM tier's Python can be paused or forked), E_SESSION_BUSY,
// E_SESSION_LOST and E_SESSION_CHECKPOINT_FAILED (no image could be made or
// restored; the source goes on as it was).
#ifndef AIRLOCK_MCP_TOOLS_SESSION_TOOLS_H_
#define AIRLOCK_MCP_TOOLS_SESSION_TOOLS_H_

#include <string>

#include <nlohmann/json.hpp>

#include "mcp/tools/languages.h"
#include "mcp/tools/tool.h"
#include "sessions/session_registry.h"

namespace airlock::mcp {

// The owner key of `caller`'s sessions: its identity (governance::Caller::identity).
std::string SessionOwner(const governance::Caller& caller);

// A tool error carrying {status: "internal_error", error_code, message}
// (and session_id when given).
nlohmann::json SessionErrorResult(const std::string& error_code, const std::string& message,
                                  const std::string& session_id = "");

class OpenSessionTool : public Tool {
 public:
  OpenSessionTool(sessions::SessionRegistry& registry, LanguageCatalog& catalog, audit::AuditLog* audit)
      : registry_(registry), catalog_(catalog), audit_(audit) {}
  std::string name() const override { return "open_session"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

  // Offers mode "codemode" (a JavaScript or Python session whose cells are `execute`
  // programs with `tools`): only where code mode is served, and only when
  // `endpoint` allows its tier.
  void OfferCodeMode(const governance::Endpoint& endpoint) {
    code_mode_ = true;
    endpoint_ = &endpoint;
  }

 private:
  sessions::SessionRegistry& registry_;
  LanguageCatalog& catalog_;
  audit::AuditLog* audit_;
  bool code_mode_ = false;
  const governance::Endpoint* endpoint_ = nullptr;
};

class CloseSessionTool : public Tool {
 public:
  explicit CloseSessionTool(sessions::SessionRegistry& registry) : registry_(registry) {}
  std::string name() const override { return "close_session"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  sessions::SessionRegistry& registry_;
};

// pause_session and resume_session: one tool each, differing only in what
// they ask of the registry.
class PauseSessionTool : public Tool {
 public:
  // `pause`: pause_session; else resume_session.
  PauseSessionTool(sessions::SessionRegistry& registry, bool pause) : registry_(registry), pause_(pause) {}
  std::string name() const override { return pause_ ? "pause_session" : "resume_session"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  sessions::SessionRegistry& registry_;
  const bool pause_;
};

class ForkSessionTool : public Tool {
 public:
  explicit ForkSessionTool(sessions::SessionRegistry& registry) : registry_(registry) {}
  std::string name() const override { return "fork_session"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  sessions::SessionRegistry& registry_;
};

class ListSessionsTool : public Tool {
 public:
  explicit ListSessionsTool(sessions::SessionRegistry& registry) : registry_(registry) {}
  std::string name() const override { return "list_sessions"; }
  nlohmann::json Definition() override;
  StatusOr<nlohmann::json> Call(const nlohmann::json& arguments, ToolCallContext& ctx) override;

 private:
  sessions::SessionRegistry& registry_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_TOOLS_SESSION_TOOLS_H_
