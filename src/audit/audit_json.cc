#include "audit/audit_json.h"

namespace airlock::audit {

using nlohmann::json;

json RowJson(const AuditRow& row) {
  json j = {{"id", row.id}, {"recorded_at", row.recorded_at}};
  if (const RunRecord* r = row.run()) {
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
  } else if (const CallRow* c = row.call()) {
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
  } else if (const EventRow* e = row.event()) {
    j.update({{"type", "event"},
              {"at", e->at},
              {"kind", e->kind},
              {"actor", e->actor},
              {"target", e->target},
              {"detail", e->detail}});
  }
  return j;
}

json VerifyJson(const VerifyReport& report) {
  json j = {{"ok", report.ok()},
            {"rows_checked", report.rows_checked},
            {"last_id", report.last_id},
            {"head_hash", report.head_hash}};
  if (const auto& p = report.problem) {
    j["problem"] = {{"kind", p->kind == VerifyProblem::Kind::kModified ? "modified" : "deleted"},
                    {"table", p->table},
                    {"id", p->id},
                    {"detail", p->detail},
                    {"message", p->ToString()}};
  }
  return j;
}

}  // namespace airlock::audit
