#include "governance/policy.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "gateway/connector_config.h"

namespace airlock::governance {
namespace {

using nlohmann::json;

bool AnyMatch(const std::vector<std::string>& patterns, std::string_view text) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return GlobMatch(p, text); });
}

bool ListHas(const std::vector<std::string>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n == "*" || n == name; });
}

Status CheckKeys(const json& j, const std::string& path, const std::set<std::string>& known) {
  if (!j.is_object()) return InvalidArgument(path + ": expected an object");
  for (const auto& [key, value] : j.items()) {
    if (!known.count(key)) return InvalidArgument(path + ": unknown key \"" + key + "\"");
  }
  return OkStatus();
}

Status ReadBool(const json& j, const std::string& path, const char* key, bool* out) {
  auto it = j.find(key);
  if (it == j.end()) return OkStatus();
  if (!it->is_boolean()) return InvalidArgument(path + "." + key + ": expected true or false");
  *out = it->get<bool>();
  return OkStatus();
}

Status ReadString(const json& j, const std::string& path, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end()) return OkStatus();
  if (!it->is_string()) return InvalidArgument(path + "." + key + ": expected a string");
  *out = it->get<std::string>();
  return OkStatus();
}

// A list of strings; `connector_names`: each must be "*" or a valid connector name.
Status ReadList(const json& j, const std::string& path, const char* key, std::vector<std::string>* out,
                bool connector_names) {
  auto it = j.find(key);
  if (it == j.end()) return OkStatus();
  const std::string p = path + "." + key;
  if (!it->is_array()) return InvalidArgument(p + ": expected an array of strings");
  out->clear();
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    const std::string at = p + "[" + std::to_string(i) + "]";
    if (!v.is_string()) return InvalidArgument(at + ": expected a string");
    const std::string s = v.get<std::string>();
    if (s.empty() || s.size() > 256) return InvalidArgument(at + ": expected 1-256 bytes");
    if (connector_names && s != "*" && !gateway::IsValidConnectorName(s)) {
      return InvalidArgument(at + ": \"" + s + "\" is not a connector name ([A-Za-z0-9_-]{1,32}) or \"*\"");
    }
    out->push_back(s);
  }
  return OkStatus();
}

bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '@';
  });
}

bool ValidPath(const std::string& p) {
  if (p.size() < 2 || p.size() > 128 || p[0] != '/' || p.back() == '/') return false;
  if (p.find("//") != std::string::npos) return false;
  return std::all_of(p.begin(), p.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '/' || c == '_' || c == '-'; });
}

StatusOr<Role> ParseRole(const std::string& name, const json& j) {
  const std::string path = "roles." + name;
  AIRLOCK_RETURN_IF_ERROR(
      CheckKeys(j, path, {"connectors", "tools", "code_tools", "inline", "propose", "write", "admin", "description"}));
  Role r;
  r.name = name;
  AIRLOCK_RETURN_IF_ERROR(ReadList(j, path, "connectors", &r.connectors, true));
  AIRLOCK_RETURN_IF_ERROR(ReadList(j, path, "tools", &r.tools, false));
  AIRLOCK_RETURN_IF_ERROR(ReadList(j, path, "code_tools", &r.code_tools, false));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, path, "inline", &r.inline_code));
  r.propose = r.inline_code;
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, path, "propose", &r.propose));
  AIRLOCK_RETURN_IF_ERROR(ReadList(j, path, "write", &r.write, true));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, path, "admin", &r.admin));
  std::string description;
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, path, "description", &description));
  return r;
}

StatusOr<Endpoint> ParseEndpoint(const std::string& name, const json& j) {
  const std::string path = "endpoints." + name;
  AIRLOCK_RETURN_IF_ERROR(CheckKeys(j, path, {"path", "connectors", "code_mode", "gateway", "run_code", "isolation", "sessions", "packages", "description"}));
  Endpoint e;
  e.name = name;
  e.path = "/" + name;
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, path, "path", &e.path));
  if (!ValidPath(e.path)) {
    return InvalidArgument(path + ".path: \"" + e.path + "\" must be \"/\" followed by [A-Za-z0-9/_-], up to 128 bytes");
  }
  AIRLOCK_RETURN_IF_ERROR(ReadList(j, path, "connectors", &e.connectors, true));
  std::string mode = "inline";
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, path, "code_mode", &mode));
  if (mode == "off") {
    e.code_mode = CodeMode::kOff;
  } else if (mode == "tools") {
    e.code_mode = CodeMode::kTools;
  } else if (mode == "inline") {
    e.code_mode = CodeMode::kInline;
  } else {
    return InvalidArgument(path + ".code_mode: expected \"off\", \"tools\" or \"inline\"");
  }
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, path, "gateway", &e.gateway));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, path, "run_code", &e.run_code));
  AIRLOCK_RETURN_IF_ERROR(ReadBool(j, path, "sessions", &e.sessions));
  AIRLOCK_RETURN_IF_ERROR(ReadList(j, path, "isolation", &e.isolation, false));
  for (const std::string& tier : e.isolation) {
    if (tier != "native" && tier != "wasm") {
      return InvalidArgument(path + ".isolation: \"" + tier + "\" is not a tier (\"native\" or \"wasm\")");
    }
  }
  if (e.isolation.empty()) return InvalidArgument(path + ".isolation: name at least one tier");
  AIRLOCK_RETURN_IF_ERROR(ReadList(j, path, "packages", &e.packages, false));
  std::string description;
  AIRLOCK_RETURN_IF_ERROR(ReadString(j, path, "description", &description));
  return e;
}

std::string OsUserName() {
  if (const passwd* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
  return "uid" + std::to_string(geteuid());
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // Iterative wildcard match with single backtrack point (linear-ish, no recursion).
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool Role::SeesConnector(const std::string& connector) const { return admin || ListHas(connectors, connector); }

bool Role::SeesTool(const std::string& connector, const std::string& qualified) const {
  return admin || (SeesConnector(connector) && AnyMatch(tools, qualified));
}

bool Role::SeesCodeTool(const std::string& name) const { return admin || AnyMatch(code_tools, name); }

bool Role::MayWrite(const std::string& connector) const { return admin || ListHas(write, connector); }

const char* CodeModeName(CodeMode m) {
  switch (m) {
    case CodeMode::kOff:
      return "off";
    case CodeMode::kTools:
      return "tools";
    case CodeMode::kInline:
      return "inline";
  }
  return "off";
}

bool Endpoint::HasConnector(const std::string& connector) const { return ListHas(connectors, connector); }

StatusOr<Policy> Policy::FromJson(const json& roles, const json& endpoints, const json& access) {
  Policy p;
  Role reader;
  reader.name = "reader";
  Role admin;
  admin.name = "admin";
  admin.admin = true;
  admin.write = {"*"};
  p.roles_["reader"] = reader;
  p.roles_["admin"] = admin;
  if (!roles.is_null()) {
    if (!roles.is_object()) return InvalidArgument("roles: expected an object");
    for (const auto& [name, value] : roles.items()) {
      if (!ValidName(name)) return InvalidArgument("roles: \"" + name + "\" is not a role name ([A-Za-z0-9_.@-]{1,64})");
      AIRLOCK_ASSIGN_OR_RETURN(Role r, ParseRole(name, value));
      p.roles_[name] = std::move(r);
    }
  }
  if (endpoints.is_null()) {
    Endpoint e;
    e.name = "default";
    p.endpoints_.push_back(e);
  } else {
    if (!endpoints.is_object()) return InvalidArgument("endpoints: expected an object");
    if (endpoints.empty()) return InvalidArgument("endpoints: define at least one endpoint (or leave the key out)");
    std::set<std::string> paths;
    for (const auto& [name, value] : endpoints.items()) {
      if (!ValidName(name) || name.find('.') != std::string::npos) {
        return InvalidArgument("endpoints: \"" + name + "\" is not an endpoint name ([A-Za-z0-9_@-]{1,64})");
      }
      AIRLOCK_ASSIGN_OR_RETURN(Endpoint e, ParseEndpoint(name, value));
      if (!paths.insert(e.path).second) {
        return InvalidArgument("endpoints." + name + ".path: \"" + e.path + "\" is used by another endpoint");
      }
      p.endpoints_.push_back(std::move(e));
    }
  }
  if (!access.is_null()) {
    AIRLOCK_RETURN_IF_ERROR(CheckKeys(access, "access", {"stdio", "token_role", "anonymous_role"}));
    if (auto it = access.find("stdio"); it != access.end()) {
      AIRLOCK_RETURN_IF_ERROR(CheckKeys(*it, "access.stdio", {"user", "role"}));
      AIRLOCK_RETURN_IF_ERROR(ReadString(*it, "access.stdio", "user", &p.stdio_.user));
      AIRLOCK_RETURN_IF_ERROR(ReadString(*it, "access.stdio", "role", &p.stdio_.role));
    }
    AIRLOCK_RETURN_IF_ERROR(ReadString(access, "access", "token_role", &p.token_role_));
    AIRLOCK_RETURN_IF_ERROR(ReadString(access, "access", "anonymous_role", &p.anonymous_role_));
  }
  for (const auto& [what, role] : {std::pair<const char*, const std::string*>{"access.stdio.role", &p.stdio_.role},
                                   {"access.token_role", &p.token_role_},
                                   {"access.anonymous_role", &p.anonymous_role_}}) {
    if (!p.roles_.count(*role)) return InvalidArgument(std::string(what) + ": no role named \"" + *role + "\"");
  }
  if (p.stdio_.user.empty()) p.stdio_.user = OsUserName();
  if (!ValidName(p.stdio_.user)) return InvalidArgument("access.stdio.user: expected [A-Za-z0-9_.@-]{1,64}");
  return p;
}

std::vector<std::string> Policy::role_names() const {
  std::vector<std::string> names;
  for (const auto& [name, role] : roles_) names.push_back(name);
  return names;
}

const Role* Policy::FindRole(const std::string& name) const {
  auto it = roles_.find(name);
  return it == roles_.end() ? nullptr : &it->second;
}

const Endpoint* Policy::FindEndpoint(const std::string& name) const {
  for (const Endpoint& e : endpoints_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const Endpoint* Policy::DefaultEndpoint() const {
  if (const Endpoint* e = FindEndpoint("default")) return e;
  return endpoints_.size() == 1 ? &endpoints_[0] : nullptr;
}

std::string Policy::EndpointNames() const {
  std::string out;
  for (const Endpoint& e : endpoints_) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

bool Policy::IsAdmin(const Caller& c) const {
  const Role* r = FindRole(c.role);
  return r != nullptr && r->admin;
}

bool Policy::SeesConnector(const Caller& c, const Endpoint& e, const std::string& connector) const {
  const Role* r = FindRole(c.role);
  return r != nullptr && e.HasConnector(connector) && r->SeesConnector(connector);
}

bool Policy::SeesTool(const Caller& c, const Endpoint& e, const std::string& connector,
                      const std::string& qualified) const {
  const Role* r = FindRole(c.role);
  return r != nullptr && e.HasConnector(connector) && r->SeesTool(connector, qualified);
}

bool Policy::MayWrite(const Caller& c, const std::string& connector) const {
  const Role* r = FindRole(c.role);
  return r != nullptr && r->MayWrite(connector);
}

}  // namespace airlock::governance
