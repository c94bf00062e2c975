// The console's audit pages: rows by the CLI's filters (audit/audit_filters.h),
// one run with its calls and events, and the chain's verification. Rows
// are the CLI's JSON (audit/audit_json.h): call arguments as stored, i.e.
// redacted.
#include <httplib.h>

#include "audit/audit_filters.h"
#include "audit/audit_json.h"
#include "console/console_http.h"
#include "console/console_reply.h"

namespace airlock::console {

using nlohmann::json;

namespace {

// The rows of a run page: a run, its calls and events about it.
constexpr int64_t kMaxRunRows = 10000;

}  // namespace

void ConsoleHttp::AuditRows(const Call& c) {
  audit::AuditStore* store = deps_.audit != nullptr ? deps_.audit->store() : nullptr;
  if (store == nullptr) return ReplyError(c.res, 503, "the audit log is disabled on this server");
  const auto param = [&](const char* key) { return c.req.get_param_value(key); };
  StatusOr<audit::AuditQuery> query = audit::ToQuery({.since = param("since"),
                                                      .until = param("until"),
                                                      .user = param("user"),
                                                      .run_id = param("run_id"),
                                                      .endpoint = param("endpoint"),
                                                      .language = param("language"),
                                                      .status = param("status"),
                                                      .type = param("type"),
                                                      .limit = param("limit").empty() ? "200" : param("limit")},
                                                     audit::NowMs());
  if (!query.ok()) return ReplyStatus(c.res, query.status());
  StatusOr<std::vector<audit::AuditRow>> rows = store->Query(*query);
  if (!rows.ok()) return ReplyStatus(c.res, rows.status());
  json out = json::array();
  // Newest first: what an operator looks for.
  for (auto it = rows->rbegin(); it != rows->rend(); ++it) out.push_back(audit::RowJson(*it));
  ReplyJson(c.res, 200,
            {{"rows", std::move(out)}, {"limited", static_cast<int64_t>(rows->size()) == query->limit}});
}

void ConsoleHttp::AuditRun(const Call& c) {
  audit::AuditStore* store = deps_.audit != nullptr ? deps_.audit->store() : nullptr;
  if (store == nullptr) return ReplyError(c.res, 503, "the audit log is disabled on this server");
  const std::string& run_id = c.path[2];
  if (run_id.empty() || run_id.size() > 64) return ReplyError(c.res, 400, "expected a run id (r_...)");
  StatusOr<std::vector<audit::AuditRow>> rows = store->Query({.run_id = run_id, .limit = kMaxRunRows});
  if (!rows.ok()) return ReplyStatus(c.res, rows.status());
  json run = nullptr, calls = json::array(), events = json::array();
  for (const audit::AuditRow& row : *rows) {
    if (row.run() != nullptr) {
      run = audit::RowJson(row);
    } else if (row.call() != nullptr) {
      calls.push_back(audit::RowJson(row));
    } else {
      events.push_back(audit::RowJson(row));
    }
  }
  if (rows->empty()) return ReplyError(c.res, 404, "the audit log has nothing on run " + run_id);
  ReplyJson(c.res, 200, {{"run", std::move(run)}, {"calls", std::move(calls)}, {"events", std::move(events)}});
}

void ConsoleHttp::AuditVerify(const Call& c) {
  audit::AuditStore* store = deps_.audit != nullptr ? deps_.audit->store() : nullptr;
  if (store == nullptr) return ReplyError(c.res, 503, "the audit log is disabled on this server");
  StatusOr<audit::VerifyReport> report = store->Verify();
  if (!report.ok()) return ReplyStatus(c.res, report.status());
  Audit("console_audit_verify", c.session.who.user, "",
        {{"ok", report->ok()}, {"rows_checked", report->rows_checked}});
  ReplyJson(c.res, 200, audit::VerifyJson(*report));
}

}  // namespace airlock::console
