#include "mcp/tools/propose_tool.h"

#include "base/encoding.h"
#include "mcp/tools/catalog_tools.h"
#include "mcp/tools/program_run.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

StatusOr<std::vector<std::string>> StringList(const json& args, const char* key, bool required) {
  std::vector<std::string> out;
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) {
    if (required) return InvalidArgument(std::string(key) + " is required");
    return out;
  }
  if (!it->is_array()) return InvalidArgument(std::string(key) + " must be an array of strings");
  for (const json& v : *it) {
    if (!v.is_string()) return InvalidArgument(std::string(key) + " must be an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

json ProposeCodeToolTool::Definition() {
  return {{"name", name()},
          {"title", "Propose a code tool"},
          {"description",
           "Propose a reusable tool written as a short JavaScript or Python program (like one for execute) that "
           "an administrator reviews. It does nothing until approved; once approved it appears in the tool list "
           "for everyone whose role allows it. The program receives its input as `args` (validated against "
           "input_schema) and returns a JSON value. Declare the connectors (and optionally the tools, "
           "\"connector.tool\" or \"connector.*\") it may use; calls outside them are denied."},
          {"inputSchema",
           {{"type", "object"},
            {"properties",
             {{"name", {{"type", "string"}, {"pattern", "^[a-z][a-z0-9_]{0,63}$"}}},
              {"description", {{"type", "string"}, {"maxLength", 4096}}},
              {"language", {{"type", "string"}, {"enum", {"javascript", "python"}}}},
              {"code", {{"type", "string"}}},
              {"input_schema", {{"type", "object"}, {"description", "JSON Schema of `args` (type object)."}}},
              {"connectors", {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}}},
              {"tools", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"limits", {{"type", "object"}, {"description", "Lower code-mode limits for its runs."}}}}},
            {"required", {"name", "description", "language", "code", "connectors"}},
            {"additionalProperties", false}}},
          {"annotations",
           {{"title", "Propose a code tool"},
            {"readOnlyHint", false},
            {"destructiveHint", false},
            {"idempotentHint", false},
            {"openWorldHint", false}}}};
}

StatusOr<json> ProposeCodeToolTool::Call(const json& arguments, ToolCallContext& ctx) {
  if (!arguments.is_object()) return InvalidArgument("arguments must be an object");
  static const std::set<std::string> kKnown = {"name",       "description", "language", "code",
                                               "input_schema", "connectors", "tools",    "limits"};
  for (const auto& [key, value] : arguments.items()) {
    if (!kKnown.count(key)) return InvalidArgument("unknown argument \"" + key + "\"");
  }
  codetools::Proposal p;
  for (const char* key : {"name", "description", "language", "code"}) {
    auto it = arguments.find(key);
    if (it == arguments.end() || !it->is_string()) return InvalidArgument(std::string(key) + " must be a string");
  }
  p.name = arguments["name"].get<std::string>();
  p.description = arguments["description"].get<std::string>();
  p.language = arguments["language"].get<std::string>();
  p.code = arguments["code"].get<std::string>();
  if (auto it = arguments.find("input_schema"); it != arguments.end() && !it->is_null()) p.input_schema = *it;
  AIRLOCK_ASSIGN_OR_RETURN(p.connectors, StringList(arguments, "connectors", true));
  AIRLOCK_ASSIGN_OR_RETURN(p.tools, StringList(arguments, "tools", false));
  if (auto it = arguments.find("limits"); it != arguments.end() && !it->is_null()) p.limits = *it;

  const governance::Caller& caller = ctx.caller();
  auto refuse = [&](const std::string& code, const std::string& message) {
    if (audit_ != nullptr) {
      (void)audit_->Event({.kind = "code_tool_propose",
                           .actor = caller.user,
                           .target = SanitizeUtf8(p.name.substr(0, 64)),
                           .detail = {{"decision", "denied"}, {"reason", message}, {"endpoint", caller.endpoint}}});
    }
    return CodeModeErrorResult(code, message);
  };
  const governance::Role* role = access_.RoleOf(caller);
  if (role == nullptr || !role->propose) return refuse("E_FORBIDDEN", "your role may not propose code tools");
  if (reserved_.count(p.name)) return refuse("E_INVALID_REQUEST", "\"" + p.name + "\" is the name of a built-in tool");
  // Only connectors the proposer can see (an unseen one is reported as unknown).
  const std::set<std::string> visible = access_.VisibleConnectors(caller);
  for (const std::string& c : p.connectors) {
    if (!visible.count(c)) {
      return refuse("E_INVALID_REQUEST", "unknown connector \"" + SanitizeUtf8(c.substr(0, 64)) + "\"");
    }
  }
  if (Status st = codetools::ValidateProposal(p); !st.ok()) return refuse("E_INVALID_REQUEST", st.message());
  // Counted only for proposals that would be stored.
  if (!rate_.TryAcquire(caller.user)) {
    const auto wait = std::chrono::duration_cast<std::chrono::seconds>(rate_.RetryAfter(caller.user)).count();
    return refuse("E_RATE_LIMITED", "at most " + std::to_string(rate_.max_events()) +
                                        " proposals per hour per user; try again in " + std::to_string(wait + 1) +
                                        " s");
  }
  if (audit_ != nullptr) {
    Status st = audit_->Event({.kind = "code_tool_propose",
                               .actor = caller.user,
                               .target = p.name,
                               .detail = {{"decision", "allowed"},
                                          {"hash", codetools::HashOf(p)},
                                          {"endpoint", caller.endpoint},
                                          {"connectors", p.connectors},
                                          {"language", p.language}}});
    if (!st.ok()) return CodeModeErrorResult("E_AUDIT_UNAVAILABLE", "the audit log cannot be written: " + st.message());
  }
  StatusOr<codetools::CodeTool> stored = store_.Propose(p, caller.user, caller.endpoint);
  if (!stored.ok()) return CodeModeErrorResult("E_INVALID_REQUEST", stored.status().message());
  json value = {{"ok", true},
                {"id", stored->id},
                {"name", stored->proposal.name},
                {"version", stored->version},
                {"hash", stored->hash},
                {"status", "proposed"},
                {"message", "Stored for review; it does nothing until an administrator other than you approves it: "
                            "`airlock tools approve " + stored->id + " --as ADMIN_USER --config CONFIG_FILE` (ADMIN_USER: "
                            "the approving admin; CONFIG_FILE: this server's configuration), after reading it with "
                            "`airlock tools show " + stored->id + " --config CONFIG_FILE`, or in the operators' console."}};
  return StructuredResult(value);
}

}  // namespace airlock::mcp
