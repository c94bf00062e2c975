#include "audit/audit_chain.h"

#include "base/encoding.h"

namespace airlock::audit {
namespace {

// A row struct's fields, in column order, each bound to its member.
template <typename Row>
struct Field {
  const char* name;
  std::variant<int64_t Row::*, std::string Row::*, nlohmann::json Row::*> member;
};

const std::vector<Field<RunRecord>>& RunFields() {
  static const std::vector<Field<RunRecord>> f = {
      {"run_id", &RunRecord::run_id},
      {"started_at", &RunRecord::started_at},
      {"ended_at", &RunRecord::ended_at},
      {"duration_ms", &RunRecord::duration_ms},
      {"user", &RunRecord::user},
      {"role", &RunRecord::role},
      {"endpoint", &RunRecord::endpoint},
      {"client", &RunRecord::client},
      {"kind", &RunRecord::kind},
      {"tool_version_hash", &RunRecord::tool_version_hash},
      {"language", &RunRecord::language},
      {"code_sha256", &RunRecord::code_sha256},
      {"code", &RunRecord::code},
      {"connectors", &RunRecord::connectors},
      {"limits", &RunRecord::limits},
      {"status", &RunRecord::status},
      {"error_code", &RunRecord::error_code},
      {"calls_total", &RunRecord::calls_total},
      {"calls_denied", &RunRecord::calls_denied},
      {"console_bytes", &RunRecord::console_bytes},
      {"result_bytes", &RunRecord::result_bytes},
  };
  return f;
}

const std::vector<Field<CallRow>>& CallFields() {
  static const std::vector<Field<CallRow>> f = {
      {"run_id", &CallRow::run_id},
      {"seq", &CallRow::seq},
      {"connector", &CallRow::connector},
      {"tool", &CallRow::tool},
      {"effective_class", &CallRow::effective_class},
      {"decision", &CallRow::decision},
      {"reason", &CallRow::reason},
      {"args_sha256", &CallRow::args_sha256},
      {"args_redacted", &CallRow::args_redacted},
      {"result_status", &CallRow::result_status},
      {"result_bytes", &CallRow::result_bytes},
      {"duration_ms", &CallRow::duration_ms},
  };
  return f;
}

const std::vector<Field<EventRow>>& EventFields() {
  static const std::vector<Field<EventRow>> f = {
      {"at", &EventRow::at},
      {"kind", &EventRow::kind},
      {"actor", &EventRow::actor},
      {"target", &EventRow::target},
      {"detail", &EventRow::detail},
  };
  return f;
}

template <typename Row>
std::vector<AuditValue> ToValues(const std::vector<Field<Row>>& fields, const Row& row) {
  std::vector<AuditValue> out;
  out.reserve(fields.size());
  for (const Field<Row>& f : fields) {
    if (auto* m = std::get_if<int64_t Row::*>(&f.member)) {
      out.emplace_back(row.**m);
    } else if (auto* m = std::get_if<std::string Row::*>(&f.member)) {
      out.emplace_back(SanitizeUtf8(row.**m));
    } else {
      const nlohmann::json& j = row.*std::get<nlohmann::json Row::*>(f.member);
      out.emplace_back(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
  }
  return out;
}

template <typename Row>
std::variant<RunRecord, CallRow, EventRow> FromValues(const std::vector<Field<Row>>& fields,
                                                      const std::vector<AuditValue>& values) {
  Row row;
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field<Row>& f = fields[i];
    if (auto* m = std::get_if<int64_t Row::*>(&f.member)) {
      row.**m = std::get<int64_t>(values[i]);
    } else if (auto* m = std::get_if<std::string Row::*>(&f.member)) {
      row.**m = std::get<std::string>(values[i]);
    } else {
      const std::string& text = std::get<std::string>(values[i]);
      nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      row.*std::get<nlohmann::json Row::*>(f.member) = j.is_discarded() ? nlohmann::json(text) : j;
    }
  }
  return row;
}

template <typename Row>
std::vector<std::pair<const char*, bool>> Columns(const std::vector<Field<Row>>& fields) {
  std::vector<std::pair<const char*, bool>> out;
  for (const Field<Row>& f : fields) {
    out.emplace_back(f.name, std::holds_alternative<int64_t Row::*>(f.member));
  }
  return out;
}

}  // namespace

const std::vector<ChainTable>& ChainTables() {
  static const std::vector<ChainTable> t = {
      {0, "runs", "audit_runs", Columns(RunFields())},
      {1, "calls", "audit_calls", Columns(CallFields())},
      {2, "events", "audit_events", Columns(EventFields())},
  };
  return t;
}

std::vector<AuditValue> ValuesOf(const RunRecord& run) { return ToValues(RunFields(), run); }
std::vector<AuditValue> ValuesOf(const CallRow& call) { return ToValues(CallFields(), call); }
std::vector<AuditValue> ValuesOf(const EventRow& event) { return ToValues(EventFields(), event); }

std::variant<RunRecord, CallRow, EventRow> RowFromValues(const ChainTable& table,
                                                         const std::vector<AuditValue>& values) {
  switch (table.index) {
    case 0:
      return FromValues(RunFields(), values);
    case 1:
      return FromValues(CallFields(), values);
    default:
      return FromValues(EventFields(), values);
  }
}

const std::string& GenesisHash() {
  static const std::string genesis(64, '0');
  return genesis;
}

std::optional<std::string> CanonicalRow(const ChainTable& t, int64_t id, int64_t recorded_at,
                                        const std::vector<AuditValue>& values) {
  nlohmann::json j = nlohmann::json::object();  // std::map: keys sorted
  j["table"] = t.kind;
  j["id"] = id;
  j["recorded_at"] = recorded_at;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    std::visit([&](const auto& v) { j[t.columns[i].first] = v; }, values[i]);
  }
  try {
    return j.dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string ChainHash(const std::string& prev_hash, const std::string& canonical) {
  return Sha256Hex(prev_hash + canonical);
}

std::string VerifyProblem::ToString() const {
  return std::string(kind == Kind::kModified ? "modified" : "deleted") + ": " + table + " id " +
         std::to_string(id) + ": " + detail;
}

bool ChainVerifier::Add(const ChainTable& t, int64_t id, int64_t recorded_at, const std::vector<AuditValue>& values,
                        bool types_ok, const std::string& prev_hash, const std::string& row_hash) {
  if (report_.problem) return false;
  ++report_.rows_checked;
  auto fail = [&](VerifyProblem::Kind kind, std::string detail) {
    report_.problem = VerifyProblem{kind, t.kind, id, std::move(detail)};
  };
  std::optional<std::string> canonical = types_ok ? CanonicalRow(t, id, recorded_at, values) : std::nullopt;
  if (id < expected_) {
    fail(VerifyProblem::Kind::kModified, "id " + std::to_string(id) + " appears twice");
  } else if (id > expected_) {
    fail(VerifyProblem::Kind::kDeleted,
         id == expected_ + 1 ? "row id " + std::to_string(expected_) + " is missing"
                             : "rows id " + std::to_string(expected_) + " to " + std::to_string(id - 1) +
                                   " are missing");
  } else if (!canonical || ChainHash(prev_hash, *canonical) != row_hash) {
    fail(VerifyProblem::Kind::kModified, "row_hash does not match its content");
  } else if (prev_hash != prev_) {
    fail(VerifyProblem::Kind::kDeleted, "prev_hash does not match the row before it: rows were removed or rewritten");
  }
  if (report_.problem) return false;
  prev_ = row_hash;
  expected_ = id + 1;
  report_.last_id = id;
  report_.head_hash = prev_;
  return true;
}

VerifyReport ChainVerifier::Finish(bool has_head, int64_t head_id, const std::string& head_hash) {
  if (report_.problem) return report_;
  if (report_.last_id == 0) report_.head_hash = GenesisHash();
  if (!has_head) head_id = -1;
  if (head_id > report_.last_id) {
    report_.problem = VerifyProblem{VerifyProblem::Kind::kDeleted, "head", report_.last_id + 1,
                                    "the chain ends at id " + std::to_string(report_.last_id) +
                                        " but the head says " + std::to_string(head_id)};
  } else if (head_id != report_.last_id || (has_head ? head_hash : "") != report_.head_hash) {
    report_.problem =
        VerifyProblem{VerifyProblem::Kind::kModified, "head", head_id, "the chain head does not match the last row"};
  }
  return report_;
}

}  // namespace airlock::audit
