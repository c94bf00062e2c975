// `airlock live [--url URL] [--key-file FILE] [--json] [--cancel RUN_ID]`:
// what the console's live page shows, from a shell: the tool calls in
// flight on a running `airlock serve --http` (who, what, for how long), the
// runner's, pool's, sessions' and connectors' health, and cancelling a run.
//
// Runs in flight exist only inside the serving process, so this command is
// a client of the console's API (docs/console.md), with the same rules: an
// admin role's API key (--key-file, else $AIRLOCK_API_KEY), a console
// sign-in for the call, CSRF token on the cancel, everything audited.
//
// Exit codes: 0 ok, 1 cannot reach the server, 2 usage, 3 refused (not an
// admin key), 4 no such run to cancel.
#include <fstream>
#include <iostream>
#include <memory>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "base/terminal_text.h"
#include "base/time_format.h"
#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "config/config.h"

namespace airlock::cli {
namespace {

using nlohmann::json;

struct LiveOptions {
  std::string config_path;
  std::string url;       // http://HOST:PORT/console; default from the config
  std::string key_file;  // else $AIRLOCK_API_KEY
  std::string cancel;
  bool json = false;
};

int Fail(int code, const std::string& message) {
  std::cerr << "airlock live: " << message << "\n";
  return code;
}

// "http://127.0.0.1:8787" and "/console" of --url.
bool SplitUrl(const std::string& url, std::string* origin, std::string* prefix) {
  if (url.rfind("http://", 0) != 0) return false;
  const size_t slash = url.find('/', 7);
  *origin = url.substr(0, slash);
  *prefix = slash == std::string::npos ? "/console" : url.substr(slash);
  while (prefix->size() > 1 && prefix->back() == '/') prefix->pop_back();
  return origin->size() > 7;
}

std::string Seconds(int64_t started_ms) {
  const int64_t ms = std::max<int64_t>(0, audit::NowMs() - started_ms);
  return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + "s";
}

void Print(const json& live) {
  const json& runs = live["runs"];
  std::cout << runs.size() << " run(s) in flight\n";
  for (const json& r : runs) {
    // User, client and tool names come from callers: escaped (base/terminal_text.h).
    std::cout << "  " << TerminalText(r.value("run_id", "")) << "  " << TerminalText(r.value("user", "")) << " ("
              << TerminalText(r.value("role", "")) << ")  " << TerminalText(r.value("endpoint", "")) << "  "
              << TerminalText(r.value("tool", "")) << "  "
              << Seconds(r.value("started_ms", int64_t{0})) << (r.value("cancel_requested", false) ? "  cancelling" : "")
              << "\n";
  }
  if (const json& runner = live["runner"]; runner.is_object()) {
    std::cout << "runner: " << (runner.value("up", false) ? "up" : "DOWN") << ", restarts "
              << runner.value("restarts", 0) << ", in flight " << runner.value("in_flight", 0) << "/"
              << runner.value("max_concurrent", 0) << ", queued " << runner.value("queued", 0);
    if (const std::string e = runner.value("error", ""); !e.empty()) std::cout << " (" << TerminalText(e) << ")";
    std::cout << "\n";
    if (const auto pool = runner.find("pool"); pool != runner.end() && pool->is_object()) {
      std::cout << "pool: ready " << pool->value("ready", 0) << ", hits " << pool->value("hits", 0) << ", misses "
                << pool->value("misses", 0) << ", discarded " << pool->value("discarded", 0) << "\n";
    }
  }
  if (const json& s = live["sessions"]; s.is_object()) {
    std::cout << "sessions: " << s.value("open", 0) << " open\n";
  }
  for (const json& c : live["connectors"]) {
    std::cout << "connector " << TerminalText(c.value("name", "")) << ": " << (c.value("connected", false) ? "up" : "down");
    if (const std::string e = c.value("error", ""); !e.empty()) std::cout << " (" << TerminalText(e) << ")";
    std::cout << "\n";
  }
}

int Live(const LiveOptions& o) {
  std::string url = o.url;
  if (url.empty()) {
    StatusOr<config::Config> cfg = LoadConfigOrDefault(o.config_path);
    if (!cfg.ok()) return Fail(2, cfg.status().message());
    url = "http://" + cfg->server.http.listen + cfg->server.http.console_path;
  }
  std::string origin, prefix;
  if (!SplitUrl(url, &origin, &prefix)) return Fail(2, "--url: expected http://HOST:PORT[/console]");
  std::string key;
  if (!o.key_file.empty()) {
    std::ifstream in(o.key_file);
    if (!in || !std::getline(in, key)) return Fail(2, "cannot read " + o.key_file);
  } else if (const char* env = getenv("AIRLOCK_API_KEY")) {
    key = env;
  }
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (key.empty()) return Fail(2, "an admin API key is needed: --key-file FILE or $AIRLOCK_API_KEY");

  httplib::Client http(origin);
  http.set_connection_timeout(5);
  http.set_read_timeout(15);
  auto signin = http.Post(prefix + "/api/signin", {{"Authorization", "Bearer " + key}}, "", "text/plain");
  if (!signin) return Fail(1, "cannot reach " + origin + " (" + httplib::to_string(signin.error()) + ")");
  json me = json::parse(signin->body, nullptr, false);
  if (signin->status != 200) {
    return Fail(signin->status == 401 || signin->status == 403 ? 3 : 1,
                "sign-in refused (" + std::to_string(signin->status) + "): " +
                    (me.is_object() ? me.value("error", signin->body) : signin->body));
  }
  const std::string set_cookie = signin->get_header_value("Set-Cookie");
  const httplib::Headers session = {{"Cookie", set_cookie.substr(0, set_cookie.find(';'))},
                                    {"X-CSRF-Token", me.value("csrf", "")}};
  int rc = 0;
  if (!o.cancel.empty()) {
    auto r = http.Post(prefix + "/api/live/cancel", session, json{{"run_id", o.cancel}}.dump(), "application/json");
    if (!r) {
      rc = Fail(1, "cancel: " + httplib::to_string(r.error()));
    } else if (r->status != 200) {
      json err = json::parse(r->body, nullptr, false);
      rc = Fail(r->status == 404 ? 4 : 1, err.is_object() ? err.value("error", r->body) : r->body);
    } else {
      std::cerr << "cancel requested for " << o.cancel << "\n";
    }
  } else {
    auto r = http.Get(prefix + "/api/live", session);
    json live = r && r->status == 200 ? json::parse(r->body, nullptr, false) : json();
    if (!live.is_object()) {
      rc = Fail(1, "live: " + (r ? std::to_string(r->status) + " " + r->body : httplib::to_string(r.error())));
    } else if (o.json) {
      std::cout << live.dump(2) << std::endl;
    } else {
      Print(live);
    }
  }
  (void)http.Post(prefix + "/api/signout", session, "", "text/plain");
  return rc;
}

}  // namespace

Subcommand AddLiveCommand(CLI::App& parent) {
  auto o = std::make_shared<LiveOptions>();
  CLI::App* live = parent.add_subcommand(
      "live", "Runs in flight on a running `airlock serve --http` and its runner's health; --cancel one");
  live->add_option("--config", o->config_path, "Configuration file (for the default --url)");
  live->add_option("--url", o->url, "The console's URL (default: http://<server.http.listen><console path>)");
  live->add_option("--key-file", o->key_file, "A file holding an admin API key (default: $AIRLOCK_API_KEY)");
  live->add_option("--cancel", o->cancel, "Cancel this run (r_...)");
  live->add_flag("--json", o->json, "JSON output (the console's /api/live answer)");
  Subcommand s;
  s.app = live;
  s.run = [o] { return Live(*o); };
  return s;
}

}  // namespace airlock::cli
