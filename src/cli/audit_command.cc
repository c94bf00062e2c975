// `airlock audit [--since WHEN] [--user U] [--run ID] [--limit N] [--json]`
// and `airlock audit verify [--json]`: read and check the audit log
// (audit/audit_store.h). Never creates a log that is not there.
//
// Exit codes: 0 ok, 1 the log is missing or unreadable, 2 usage or config
// error, 4 verify found a modified or deleted row.
#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "base/time_format.h"
#include "audit/audit_log.h"
#include "audit/sqlite_audit_store.h"
#include "cli/commands.h"
#include "cli/executor_factory.h"

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
  std::string since, user, run_id;
  int64_t limit = 1000;
  bool json = false;
};

// `count` decimal digits of `s` at `pos`, or -1.
int Digits(const std::string& s, size_t pos, size_t count) {
  if (pos + count > s.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// "YYYY-MM-DD", "YYYY-MM-DDTHH:MMZ", "YYYY-MM-DDTHH:MM:SS[.fff]Z" (UTC) as Unix ms.
std::optional<int64_t> ParseIsoUtc(const std::string& s) {
  if (s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  struct tm tm = {};
  const int year = Digits(s, 0, 4), month = Digits(s, 5, 2), day = Digits(s, 8, 2);
  int hour = 0, minute = 0, second = 0, millis = 0;
  if (year < 1970 || month < 1 || month > 12 || day < 1) return std::nullopt;
  if (s.size() > 10) {
    if (s[10] != 'T' || s.back() != 'Z' || s.size() < 17 || s[13] != ':') return std::nullopt;
    hour = Digits(s, 11, 2);
    minute = Digits(s, 14, 2);
    size_t pos = 16;
    if (s[pos] == ':') {
      second = Digits(s, pos + 1, 2);
      if (second < 0) return std::nullopt;
      pos += 3;
      if (s[pos] == '.') {
        size_t digits = 0;
        for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, ++digits) {
          if (digits < 3) millis = millis * 10 + (s[pos] - '0');
        }
        if (digits == 0) return std::nullopt;
        for (; digits < 3; ++digits) millis *= 10;
      }
    }
    if (pos != s.size() - 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
        second > 59) {
      return std::nullopt;
    }
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const time_t t = timegm(&tm);
  struct tm check;
  if (t == static_cast<time_t>(-1) || gmtime_r(&t, &check) == nullptr || check.tm_mday != day ||
      check.tm_mon != month - 1) {
    return std::nullopt;  // 2026-02-30
  }
  return static_cast<int64_t>(t) * 1000 + millis;
}

// --since: Unix ms, an ISO-8601 UTC time, or "15m" / "2h" / "7d" / "30s" ago.
std::optional<int64_t> ParseSince(const std::string& when, int64_t now_ms) {
  if (when.empty() || when.size() > 30) return std::nullopt;
  size_t digits = 0;
  while (digits < when.size() && when[digits] >= '0' && when[digits] <= '9') ++digits;
  if (digits == when.size() && digits <= 15) return std::stoll(when);
  if (digits > 0 && digits <= 9 && digits + 1 == when.size()) {
    const int64_t n = std::stoll(when.substr(0, digits));
    switch (when.back()) {
      case 's': return now_ms - n * 1000;
      case 'm': return now_ms - n * 60'000;
      case 'h': return now_ms - n * 3'600'000;
      case 'd': return now_ms - n * 86'400'000;
      default: return std::nullopt;
    }
  }
  return ParseIsoUtc(when);
}

// A value for a one-line listing: control bytes escaped, quoted if it holds
// spaces or quotes, "-" if empty.
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
  return quote ? "\"" + out + "\"" : out;
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

json RowJson(const audit::AuditRow& row) {
  json j = {{"id", row.id}, {"recorded_at", row.recorded_at}};
  if (const audit::RunRecord* r = row.run()) {
    j.update({{"type", "run"},
              {"run_id", r->run_id},
              {"started_at", r->started_at},
              {"ended_at", r->ended_at},
              {"duration_ms", r->duration_ms},
              {"user", r->user},
              {"role", r->role},
              {"endpoint", r->endpoint},
              {"client", r->client},
              {"kind", r->kind},
              {"tool_version_hash", r->tool_version_hash},
              {"language", r->language},
              {"code_sha256", r->code_sha256},
              {"code", r->code},
              {"connectors", r->connectors},
              {"limits", r->limits},
              {"status", r->status},
              {"error_code", r->error_code},
              {"calls_total", r->calls_total},
              {"calls_denied", r->calls_denied},
              {"console_bytes", r->console_bytes},
              {"result_bytes", r->result_bytes}});
  } else if (const audit::CallRow* c = row.call()) {
    j.update({{"type", "call"},
              {"run_id", c->run_id},
              {"seq", c->seq},
              {"connector", c->connector},
              {"tool", c->tool},
              {"effective_class", c->effective_class},
              {"decision", c->decision},
              {"reason", c->reason},
              {"args_sha256", c->args_sha256},
              {"args_redacted", c->args_redacted},
              {"result_status", c->result_status},
              {"result_bytes", c->result_bytes},
              {"duration_ms", c->duration_ms}});
  } else if (const audit::EventRow* e = row.event()) {
    j.update({{"type", "event"},
              {"at", e->at},
              {"kind", e->kind},
              {"actor", e->actor},
              {"target", e->target},
              {"detail", e->detail}});
  }
  return j;
}

// The store at the configured path; NotFound (without creating anything) if
// there is no file there.
StatusOr<std::unique_ptr<audit::SqliteAuditStore>> OpenExisting(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound("no audit log at " + path);
    return ErrnoError("stat " + path);
  }
  return audit::SqliteAuditStore::Open(path);
}

// Loads the config, applies the overrides and opens the log; prints the
// error and sets `*exit_code` on failure.
std::unique_ptr<audit::SqliteAuditStore> OpenFromOptions(const AuditOptions& o, int* exit_code) {
  StatusOr<config::Config> cfg = LoadConfigOrDefault(o.config_path);
  if (!cfg.ok()) {
    std::cerr << "airlock audit: " << cfg.status().message() << "\n";
    *exit_code = kExitUsage;
    return nullptr;
  }
  if (!o.state_dir.empty()) cfg->server.state_dir = o.state_dir;
  if (!o.db.empty()) cfg->audit.path = o.db;
  StatusOr<std::unique_ptr<audit::SqliteAuditStore>> store = OpenExisting(cfg->AuditDbPath());
  if (!store.ok()) {
    std::cerr << "airlock audit: " << store.status().message() << "\n";
    *exit_code = kExitError;
    return nullptr;
  }
  return std::move(*store);
}

int Query(const AuditOptions& o) {
  audit::AuditQuery query{.user = o.user, .run_id = o.run_id, .limit = o.limit};
  if (!o.since.empty()) {
    std::optional<int64_t> since = ParseSince(o.since, audit::NowMs());
    if (!since) {
      std::cerr << "airlock audit: --since " << o.since
                << ": expected Unix milliseconds, an ISO-8601 UTC time (2026-12-02, "
                   "2026-12-02T10:00:00Z) or a relative time (30s, 15m, 2h, 7d)\n";
      return kExitUsage;
    }
    query.since = *since;
  }
  if (o.limit <= 0) {
    std::cerr << "airlock audit: --limit must be > 0\n";
    return kExitUsage;
  }
  int exit_code = kExitOk;
  std::unique_ptr<audit::SqliteAuditStore> store = OpenFromOptions(o, &exit_code);
  if (!store) return exit_code;
  StatusOr<std::vector<audit::AuditRow>> rows = store->Query(query);
  if (!rows.ok()) {
    std::cerr << "airlock audit: " << rows.status().message() << "\n";
    return kExitError;
  }
  if (o.json) {
    json out = json::array();
    for (const audit::AuditRow& row : *rows) out.push_back(RowJson(row));
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << std::endl;
  } else {
    for (const audit::AuditRow& row : *rows) std::cout << Line(row) << "\n";
    std::cout.flush();
    if (rows->empty()) std::cerr << "no matching rows\n";
  }
  if (static_cast<int64_t>(rows->size()) == o.limit) {
    std::cerr << "showing the newest " << o.limit << " matching rows (--limit)\n";
  }
  return kExitOk;
}

int Verify(const AuditOptions& o) {
  int exit_code = kExitOk;
  std::unique_ptr<audit::SqliteAuditStore> store = OpenFromOptions(o, &exit_code);
  if (!store) return exit_code;
  StatusOr<audit::VerifyReport> report = store->Verify();
  if (!report.ok()) {
    std::cerr << "airlock audit verify: " << report.status().message() << "\n";
    return kExitError;
  }
  if (o.json) {
    json j = {{"ok", report->ok()},
              {"rows_checked", report->rows_checked},
              {"last_id", report->last_id},
              {"head_hash", report->head_hash}};
    if (const auto& p = report->problem) {
      j["problem"] = {{"kind", p->kind == audit::VerifyProblem::Kind::kModified ? "modified" : "deleted"},
                      {"table", p->table},
                      {"id", p->id},
                      {"detail", p->detail},
                      {"message", p->ToString()}};
    }
    std::cout << j.dump(2) << std::endl;
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
  audit->add_option("--db", options->db, "The audit database (overrides audit.path)");
  audit->add_flag("--json", options->json, "JSON output");
  CLI::Option* since = audit->add_option(
      "--since", options->since, "Rows recorded since WHEN: Unix ms, 2026-12-02[T10:00:00Z], or 30s/15m/2h/7d ago");
  CLI::Option* user = audit->add_option("--user", options->user, "Runs (and their calls) and actions of this user");
  CLI::Option* run = audit->add_option("--run", options->run_id, "This run and its calls");
  CLI::Option* limit = audit->add_option("--limit", options->limit, "At most N rows, the newest (default 1000)");
  CLI::App* verify = audit->add_subcommand(
      "verify", "Check the hash chain; exit 4 if a row was modified or deleted");
  verify->fallthrough();  // --config, --db, --json after `verify`
  Subcommand s;
  s.app = audit;
  s.run = [options, verify, filters = std::vector<CLI::Option*>{since, user, run, limit}] {
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
