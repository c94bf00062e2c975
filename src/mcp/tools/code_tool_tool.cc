#include "mcp/tools/code_tool_tool.h"

#include "codemode/bridge_frames.h"
#include "gateway/schema_validator.h"
#include "mcp/tools/program_run.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;

// The role whose rights the program runs with.
const governance::Role* EffectiveRole(const Access& access, const governance::Caller& caller,
                                      const codetools::CodeTool& t) {
  if (t.approval.run_as_definer) return access.policy().FindRole(t.approval.definer_role);
  return access.RoleOf(caller);
}

bool Declares(const codetools::CodeTool& t, const gateway::ToolEntry& e) {
  const auto& c = t.proposal.connectors;
  if (std::find(c.begin(), c.end(), e.connector) == c.end()) return false;
  if (t.proposal.tools.empty()) return true;
  for (const std::string& pattern : t.proposal.tools) {
    if (governance::GlobMatch(pattern, e.name)) return true;
  }
  return false;
}

}  // namespace

std::string WithArgsPrologue(const std::string& language, const std::string& code, const json& args) {
  const std::string literal = json(codemode::Dump(args)).dump();  // a JSON string literal, valid in JS and Python
  if (language == "python") return "args = __import__(\"json\").loads(" + literal + ")\n" + code;
  return "const args = JSON.parse(" + literal + ");\n" + code;
}

bool CodeToolTool::VisibleTo(const Access& access, const governance::Caller& caller, const codetools::CodeTool& t) {
  const governance::Role* role = access.RoleOf(caller);
  if (role == nullptr || !role->SeesCodeTool(t.proposal.name)) return false;
  if (t.approval.run_as_definer) return true;
  for (const std::string& c : t.proposal.connectors) {
    if (!access.policy().SeesConnector(caller, access.endpoint(), c)) return false;
  }
  return true;
}

json CodeToolTool::Definition() {
  const codetools::Proposal& p = version_.proposal;
  bool read_only = true;
  if (version_.approval.allow_write && deps_.gateway != nullptr) {
    const std::set<std::string> connectors(p.connectors.begin(), p.connectors.end());
    for (const gateway::ToolEntry& e : deps_.gateway->ListTools(nullptr, &connectors)) {
      if (Declares(version_, e) && !e.read_only) read_only = false;
    }
  }
  return {{"name", p.name},
          {"title", p.name},
          {"description", p.description + "\n\n(Code tool v" + std::to_string(version_.version) + ", " + p.language +
                              ", approved by " + version_.decided_by + "; hash " + version_.hash.substr(0, 12) + ")"},
          {"inputSchema", p.input_schema},
          {"annotations",
           {{"title", p.name},
            {"readOnlyHint", read_only},
            {"destructiveHint", !read_only},
            {"idempotentHint", false},
            {"openWorldHint", true}}},
          {"_meta", {{"airlock/codeTool", {{"id", version_.id}, {"version", version_.version}, {"hash", version_.hash}}}}}};
}

StatusOr<json> CodeToolTool::Call(const json& arguments, ToolCallContext& ctx) {
  const json args = arguments.is_null() ? json::object() : arguments;
  if (!args.is_object()) return InvalidArgument("arguments must be an object");
  // Re-read: revoked, superseded or edited since it was listed -> refused.
  StatusOr<codetools::CodeTool> now = deps_.store->Get(version_.id);
  if (!now.ok() || now->state != codetools::State::kApproved || !now->intact || now->hash != version_.hash ||
      codetools::HashOf(now->proposal) != version_.hash) {
    return CodeModeErrorResult("E_TOOL_UNAVAILABLE", "code tool \"" + name() +
                                                         "\" is no longer approved in this version; list the tools "
                                                         "again");
  }
  if (Status st = gateway::ValidateJsonSchema(version_.proposal.input_schema, args); !st.ok()) {
    return CodeModeErrorResult("E_INVALID_ARGS", st.message());
  }
  const Access& access = *deps_.access;
  const governance::Caller& caller = ctx.caller();
  const governance::Role* role = EffectiveRole(access, caller, version_);
  if (role == nullptr || !VisibleTo(access, caller, version_)) {
    return CodeModeErrorResult("E_TOOL_UNAVAILABLE", "code tool \"" + name() + "\" is not available");
  }
  if (std::string why = CodeModeTierRefusal(access.endpoint(), version_.proposal.language); !why.empty()) {
    return CodeModeErrorResult("E_INVALID_REQUEST", why);
  }
  codemode::Grants grants;
  for (const std::string& c : version_.proposal.connectors) {
    if (access.endpoint().HasConnector(c) && role->SeesConnector(c)) grants.connectors.insert(c);
    if (version_.approval.allow_write && role->MayWrite(c)) grants.write_connectors.insert(c);
  }
  const codetools::CodeTool version = version_;
  grants.tool_filter = [version, role](const gateway::ToolEntry& e) {
    return Declares(version, e) && role->SeesTool(e.connector, e.name);
  };
  StatusOr<codemode::Limits> limits = codemode::ApplyCallerLimits(deps_.admin_limits, version_.proposal.limits);
  if (!limits.ok()) return CodeModeErrorResult("E_INVALID_REQUEST", limits.status().message());

  ProgramSpec spec;
  spec.language = version_.proposal.language;
  spec.code = WithArgsPrologue(spec.language, version_.proposal.code, args);
  spec.audited_code = version_.proposal.code;
  spec.grants = std::move(grants);
  spec.limits = *limits;
  spec.kind = "code_tool";
  spec.tool_name = name();
  spec.tool_version_hash = version_.hash;
  return RunProgram(*deps_.gateway, *deps_.executor, deps_.audit, spec, ctx);
}

}  // namespace airlock::mcp
