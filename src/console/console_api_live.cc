// The console's live page: every tool call in flight on every endpoint
// (mcp/run_tracker.h) with cancel, and the health of what runs them: the
// runner (pool, sessions), the connectors, the code sessions.
#include <httplib.h>

#include "base/encoding.h"
#include "console/console_http.h"
#include "console/console_reply.h"

namespace airlock::console {

using nlohmann::json;

void ConsoleHttp::Live(const Call& c) {
  json runs = json::array();
  if (deps_.runs != nullptr) {
    for (const mcp::RunInFlight& r : deps_.runs->List()) runs.push_back(mcp::ToJson(r));
  }
  json out = {{"runs", std::move(runs)}};
  out["runner"] = deps_.runner_health ? deps_.runner_health() : json(nullptr);
  out["connectors"] = deps_.connector_health ? deps_.connector_health() : json::array();
  out["sessions"] = deps_.session_stats ? deps_.session_stats() : json(nullptr);
  ReplyJson(c.res, 200, out);
}

void ConsoleHttp::CancelRun(const Call& c) {
  std::optional<json> body = JsonBody(c.req, c.res);
  if (!body) return;
  if (!body->contains("run_id") || !(*body)["run_id"].is_string()) {
    return ReplyError(c.res, 400, "expected {\"run_id\": \"r_...\"}");
  }
  const std::string run_id = (*body)["run_id"].get<std::string>();
  Status st = deps_.runs != nullptr ? deps_.runs->Cancel(run_id) : NotFound("no runs are tracked");
  Audit("console_cancel", c.session.who.user, SanitizeUtf8(run_id.substr(0, 64)),
        {{"result", st.ok() ? "cancelled" : st.message()}});
  if (!st.ok()) return ReplyError(c.res, 404, st.message());
  ReplyJson(c.res, 200, {{"run_id", run_id}, {"cancelled", true}});
}

}  // namespace airlock::console
