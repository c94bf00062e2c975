// The console's keys page: list, create (the secret is in this one answer
// and nowhere else), revoke (the key is refused from its next request on,
// its console sign-ins included), through admin/key_admin.h as the CLI.
#include <httplib.h>

#include "admin/key_admin.h"
#include "console/console_http.h"
#include "console/console_reply.h"

namespace airlock::console {

using nlohmann::json;

void ConsoleHttp::Keys(const Call& c) {
  if (deps_.keys == nullptr) return ReplyError(c.res, 503, "API keys are not used on this server");
  StatusOr<std::vector<auth::KeyInfo>> list = deps_.keys->List();
  if (!list.ok()) return ReplyStatus(c.res, list.status());
  json keys = json::array();
  for (const auth::KeyInfo& k : *list) keys.push_back(admin::ToJson(k));
  ReplyJson(c.res, 200, {{"keys", std::move(keys)}});
}

void ConsoleHttp::CreateKey(const Call& c) {
  if (deps_.keys == nullptr || deps_.audit == nullptr) {
    return ReplyError(c.res, 503, "API keys are not used on this server");
  }
  std::optional<json> body = JsonBody(c.req, c.res);
  if (!body) return;
  std::optional<std::string> user = StringField(*body, "user", 64, c.res);
  if (!user) return;
  std::optional<std::string> role = StringField(*body, "role", 64, c.res);
  if (!role) return;
  std::optional<std::string> name = StringField(*body, "name", 128, c.res);
  if (!name) return;
  // Stricter than the CLI, which may name a role the config defines later:
  // a browser form offers only the roles that exist.
  if (deps_.policy != nullptr && deps_.policy->FindRole(*role) == nullptr) {
    return ReplyError(c.res, 400, "role: no such role \"" + *role + "\"");
  }
  StatusOr<auth::NewKey> k =
      admin::CreateKey(*deps_.keys, *deps_.audit, {c.session.who.user, "console"}, *user, *role, *name);
  if (!k.ok()) return ReplyStatus(c.res, k.status());
  ReplyJson(c.res, 200, {{"key", admin::ToJson(k->info)}, {"secret", k->secret}});
}

void ConsoleHttp::RevokeKey(const Call& c) {
  if (deps_.keys == nullptr || deps_.audit == nullptr) {
    return ReplyError(c.res, 503, "API keys are not used on this server");
  }
  StatusOr<auth::KeyInfo> k = admin::RevokeKey(*deps_.keys, *deps_.audit, {c.session.who.user, "console"}, c.path[1]);
  if (!k.ok()) return ReplyStatus(c.res, k.status());
  sessions_.EndSessionsOfKey(k->id);  // its console sign-ins too (this one, if it revoked its own key)
  ReplyJson(c.res, 200, {{"key", admin::ToJson(*k)}});
}

}  // namespace airlock::console
