// `airlock audit [--since WHEN] [--user U] [--run ID] [--limit N] [--json]`
// and `airlock audit verify [--json]`: read and check the audit log
// (audit/audit_store.h) of either state.backend (state/state_stores.h).
// Never creates a log that is not there.
//
// Exit codes: 0 ok, 1 the log is missing or unreadable, 2 usage or config
// error, 4 verify found a modified or deleted row.
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/terminal_text.h"
#include "base/time_format.h"
#include "audit/audit_filters.h"
#include "audit/audit_json.h"
#include "audit/audit_log.h"
#include "cli/commands.h"
#include "cli/executor_factory.h"
#include "state/state_stores.h"

namespace airlock::cli {
namespace {

using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitTampered = 4;

struct AuditOptions {
  std::string config_path;
  std::string state_dir;  // overrides server.state_dir
  std::string db;         // overrides audit.path
  audit::AuditFilters filters;  // as typed; checked by audit::ToQuery
  bool json = false;
};

// A value for a one-line listing: control bytes escaped, quoted if it holds
// spaces or quotes, "-" if empty. C1 controls, bidi overrides and invalid
// UTF-8 are escaped too (base/terminal_text.h), so an agent's text cannot
// rewrite the operator's terminal.
std::string Printable(const std::string& s) {
  if (s.empty()) return "-";
  std::string out;
  bool quote = false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
      quote = true;
    } else if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
      quote = true;
    } else {
      if (c == ' ') quote = true;
      out.push_back(static_cast<char>(c));
    }
  }
  const std::string safe = TerminalText(out, TextShape::kLine);
  return quote || safe != out ? "\"" + safe + "\"" : safe;
}

// " key=value", or nothing when the value is empty.
std::string Field(const char* key, const std::string& value) {
  return value.empty() ? "" : std::string(" ") + key + "=" + Printable(value);
}

// An event's detail as " key=value" pairs, "decision" first; values that
// are not strings as compact JSON.
std::string DetailFields(const json& detail) {
  if (detail.is_null() || (detail.is_object() && detail.empty())) return "";
  if (!detail.is_object()) return Field("detail", detail.dump(-1, ' ', false, json::error_handler_t::replace));
  auto pair = [](const std::string& key, const json& value) {
    const std::string text =
        value.is_string() ? value.get<std::string>() : value.dump(-1, ' ', false, json::error_handler_t::replace);
    return " " + Printable(key) + "=" + Printable(text);
  };
  std::string out;
  if (detail.contains("decision")) out += pair("decision", detail["decision"]);
  for (const auto& [key, value] : detail.items()) {
    if (key != "decision") out += pair(key, value);
  }
  return out;
}

std::string Line(const audit::AuditRow& row) {
  std::string id = std::to_string(row.id);
  if (id.size() < 6) id.insert(0, 6 - id.size(), ' ');
  std::string out = IsoUtc(row.recorded_at) + " " + id + " ";
  if (const audit::RunRecord* r = row.run()) {
    out += "run   " + Printable(r->run_id) + Field("user", r->user) + Field("role", r->role) +
           Field("endpoint", r->endpoint) + Field("kind", r->kind) + Field("lang", r->language) +
           Field("status", r->status) + Field("error", r->error_code) +
           " duration=" + std::to_string(r->duration_ms) + "ms calls=" + std::to_string(r->calls_total) +
           " denied=" + std::to_string(r->calls_denied);
  } else if (const audit::CallRow* c = row.call()) {
    out += "call  " + Printable(c->run_id) + " #" + std::to_string(c->seq) + " " +
           Printable(c->connector + "." + c->tool) + Field("class", c->effective_class) +
           Field("decision", c->decision) + Field("reason", c->reason) + Field("result", c->result_status);
  } else if (const audit::EventRow* e = row.event()) {
    out += "event " + Printable(e->kind) + Field("actor", e->actor) + Field("target", e->target) +
           DetailFields(e->detail);
  }
  return out;
}

// Loads the config, applies the overrides and opens the log read-only
// (reading the log needs no write access; nothing is created); prints the
// error and sets `*exit_code` on failure. --db names a SQLite file whatever
// state.backend says.
std::unique_ptr<audit::AuditStore> OpenFromOptions(const AuditOptions& o, int* exit_code) {
  StatusOr<config::Config> cfg = LoadConfigOrDefault(o.config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock audit: " << cfg.status().message() << "\n";
    *exit_code = kExitUsage;
    return nullptr;
  }
  if (!o.state_dir.empty()) cfg->server.state_dir = o.state_dir;
  if (!o.db.empty()) {
    cfg->audit.path = o.db;
    cfg->state.backend = "sqlite";
  }
  StatusOr<std::unique_ptr<audit::AuditStore>> store = state::OpenExistingAuditStore(*cfg);
  if (!store.ok()) {
    std::cerr << "airlock audit: " << store.status().message() << "\n";
    *exit_code = kExitError;
    return nullptr;
  }
  return std::move(*store);
}

int Query(const AuditOptions& o) {
  StatusOr<audit::AuditQuery> q = audit::ToQuery(o.filters, audit::NowMs());
  if (!q.ok()) {
    std::cerr << "airlock audit: --" << q.status().message() << "\n";
    return kExitUsage;
  }
  const audit::AuditQuery& query = *q;
  int exit_code = kExitOk;
  std::unique_ptr<audit::AuditStore> store = OpenFromOptions(o, &exit_code);
  if (!store) return exit_code;
  StatusOr<std::vector<audit::AuditRow>> rows = store->Query(query);
  if (!rows.ok()) {
    std::cerr << "airlock audit: " << rows.status().message() << "\n";
    return kExitError;
  }
  if (o.json) {
    json out = json::array();
    for (const audit::AuditRow& row : *rows) out.push_back(audit::RowJson(row));
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << std::endl;
  } else {
    for (const audit::AuditRow& row : *rows) std::cout << Line(row) << "\n";
    std::cout.flush();
    if (rows->empty()) std::cerr << "no matching rows\n";
  }
  if (static_cast<int64_t>(rows->size()) == query.limit) {
    std::cerr << "showing the newest " << query.limit << " matching rows (--limit)\n";
  }
  return kExitOk;
}

int Verify(const AuditOptions& o) {
  int exit_code = kExitOk;
  std::unique_ptr<audit::AuditStore> store = OpenFromOptions(o, &exit_code);
  if (!store) return exit_code;
  StatusOr<audit::VerifyReport> report = store->Verify();
  if (!report.ok()) {
    std::cerr << "airlock audit verify: " << report.status().message() << "\n";
    return kExitError;
  }
  if (o.json) {
    std::cout << audit::VerifyJson(*report).dump(2) << std::endl;
  } else if (report->ok()) {
    std::cout << "ok: " << report->rows_checked << " rows, head " << report->head_hash << std::endl;
  } else {
    std::cout << "TAMPERED: " << report->problem->ToString() << std::endl;
  }
  return report->ok() ? kExitOk : kExitTampered;
}

}  // namespace

Subcommand AddAuditCommand(CLI::App& parent) {
  auto options = std::make_shared<AuditOptions>();
  CLI::App* audit = parent.add_subcommand(
      "audit", "Show the audit log (runs, their calls, admin actions), oldest first; `verify` checks it");
  audit->add_option("--config", options->config_path, "Configuration file (JSON); defaults are embedded");
  audit->add_option("--state-dir", options->state_dir, "Overrides server.state_dir");
  audit->add_option("--db", options->db, "A SQLite audit database (overrides audit.path and state.backend)");
  audit->add_flag("--json", options->json, "JSON output");
  audit::AuditFilters& f = options->filters;
  std::vector<CLI::Option*> filters = {
      audit->add_option("--since", f.since,
                        "Rows recorded since WHEN: Unix ms, 2026-12-02[T10:00:00Z], or 30s/15m/2h/7d ago"),
      audit->add_option("--until", f.until, "Rows recorded before WHEN (same forms as --since)"),
      audit->add_option("--user", f.user, "Runs (and their calls) and actions of this user"),
      audit->add_option("--run", f.run_id, "This run, its calls and the events about it"),
      audit->add_option("--endpoint", f.endpoint, "Runs on this endpoint, and their calls"),
      audit->add_option("--language", f.language, "Runs in this language, and their calls"),
      audit->add_option("--status", f.status, "Runs that ended with this status (SUCCESS, ERROR, TIMEOUT, LIMIT, DENIED, CANCELLED; any case), and their calls"),
      audit->add_option("--type", f.type, "Only rows of this type: run, call or event (any case)"),
      audit->add_option("--limit", f.limit, "At most N rows, the newest (default 1000)")};
  CLI::App* verify = audit->add_subcommand(
      "verify", "Check the hash chain; exit 4 if a row was modified or deleted");
  verify->fallthrough();  // --config, --db, --json after `verify`
  Subcommand s;
  s.app = audit;
  s.run = [options, verify, filters] {
    if (!*verify) return Query(*options);
    for (const CLI::Option* f : filters) {
      if (f->count() > 0) {
        std::cerr << "airlock audit verify: " << f->get_name() << " does not apply (verify checks every row)\n";
        return kExitUsage;
      }
    }
    return Verify(*options);
  };
  return s;
}

}  // namespace airlock::cli
