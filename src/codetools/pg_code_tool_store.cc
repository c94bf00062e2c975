#include "codetools/pg_code_tool_store.h"

#include <chrono>

#include "codetools/code_tool_rows.h"
#include "db/pg_migrations.h"

namespace airlock::codetools {
namespace {

using state::HasNul;
using state::PgDatabase;

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// InvalidArgument naming the first of `fields` that holds a NUL byte.
Status NoNul(std::initializer_list<std::pair<const char*, const std::string*>> fields) {
  for (const auto& [name, value] : fields) {
    if (HasNul(*value)) return InvalidArgument(std::string(name) + ": contains a NUL byte");
  }
  return OkStatus();
}

CodeTool ReadRow(const pqxx::row& r) {
  pqxx::row::size_type c = 0;
  StoredTool s = ReadStoredColumns([&] { return r[c++].as<std::string>(); }, [&] { return r[c++].as<int64_t>(); });
  return FromStored(s);  // the schema enforces every column's type
}

// Every row matching `where` ($1, $2, ... bound to `args` as text), newest first.
std::vector<CodeTool> Select(pqxx::transaction_base& tx, const std::string& where, const std::vector<std::string>& args) {
  pqxx::result r = tx.exec_params(std::string("SELECT ") + kStoredToolColumns + " FROM code_tools WHERE " + where +
                                      " ORDER BY seq DESC",
                                  pqxx::prepare::make_dynamic_params(args));
  std::vector<CodeTool> out;
  out.reserve(r.size());
  for (const pqxx::row& row : r) out.push_back(ReadRow(row));
  return out;
}

StatusOr<CodeTool> GetIn(pqxx::transaction_base& tx, const std::string& id) {
  std::vector<CodeTool> rows = HasNul(id) ? std::vector<CodeTool>{} : Select(tx, "id = $1::text", {id});
  if (rows.empty()) return NotFound("no code tool " + id);
  return rows.front();
}

}  // namespace

PgCodeToolStore::PgCodeToolStore(std::shared_ptr<PgDatabase> db, Options options)
    : db_(std::move(db)), options_(std::move(options)) {
  if (!options_.now_ms) options_.now_ms = SystemNowMs;
}

StatusOr<std::unique_ptr<PgCodeToolStore>> PgCodeToolStore::Open(std::shared_ptr<PgDatabase> db, Options options) {
  if (db == nullptr) return InvalidArgument("code tool store: no database");
  AIRLOCK_RETURN_IF_ERROR(state::MigratePg(*db));
  std::unique_ptr<PgCodeToolStore> store(new PgCodeToolStore(std::move(db), std::move(options)));
  (void)store->Generation();
  return store;
}

Status PgCodeToolStore::Change(const PgDatabase::Body& body) {
  return db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    tx.exec("SELECT generation FROM code_tools_meta WHERE singleton = 1 FOR UPDATE");
    return body(tx);
  });
}

StatusOr<CodeTool> PgCodeToolStore::Propose(const Proposal& p, const std::string& proposer,
                                            const std::string& endpoint) {
  AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, NewVersion(p, proposer, endpoint));
  AIRLOCK_RETURN_IF_ERROR(NoNul({{"description", &p.description},
                                 {"code", &p.code},
                                 {"proposer", &proposer},
                                 {"endpoint", &endpoint}}));
  t.proposed_at = options_.now_ms();
  AIRLOCK_RETURN_IF_ERROR(Change([&](pqxx::transaction_base& tx) -> Status {
    std::vector<CodeTool> same =
        Select(tx, "endpoint = $1::text AND name = $2::text AND hash = $3::text AND state IN ('proposed', 'approved')",
               {endpoint, t.proposal.name, t.hash});
    if (!same.empty()) return DuplicateVersion(same[0]);
    t.version = tx.exec_params1("SELECT COALESCE(MAX(version), 0) + 1 FROM code_tools WHERE endpoint = $1::text "
                                "AND name = $2::text",
                                endpoint, t.proposal.name)[0]
                    .as<int64_t>();
    tx.exec_params(
        "INSERT INTO code_tools (id, endpoint, name, version, description, language, code, input_schema, "
        "connectors, tools, limits, hash, state, proposer, proposed_at) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'proposed', $13, $14)",
        t.id, endpoint, t.proposal.name, t.version, t.proposal.description, t.proposal.language, t.proposal.code,
        DumpJson(t.proposal.input_schema), DumpJson(t.proposal.connectors), DumpJson(t.proposal.tools),
        DumpJson(t.proposal.limits), t.hash, proposer, t.proposed_at);
    return OkStatus();
  }));
  return t;
}

Status PgCodeToolStore::Approve(const std::string& id, const std::string& actor, const Approval& approval) {
  AIRLOCK_RETURN_IF_ERROR(CheckApproval(actor, approval));
  AIRLOCK_RETURN_IF_ERROR(NoNul({{"approver", &actor},
                                 {"definer_role", &approval.definer_role},
                                 {"reason", &approval.reason}}));
  const int64_t now = options_.now_ms();
  return Change([&](pqxx::transaction_base& tx) -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetIn(tx, id));
    AIRLOCK_RETURN_IF_ERROR(CheckApprove(t, actor));
    tx.exec_params("UPDATE code_tools SET state = 'superseded' WHERE endpoint = $1::text AND name = $2::text AND "
                   "state = 'approved'",
                   t.endpoint, t.proposal.name);
    tx.exec_params("UPDATE code_tools SET state = 'approved', decided_by = $2::text, decided_at = $3::bigint, "
                   "approved_by = $2::text, approved_at = $3::bigint, allow_write = $4::bigint, "
                   "run_as_definer = $5::bigint, definer_role = $6::text, approval_reason = $7::text "
                   "WHERE id = $1::text",
                   id, actor, now, int64_t{approval.allow_write}, int64_t{approval.run_as_definer},
                   approval.run_as_definer ? approval.definer_role : std::string(), approval.reason);
    return OkStatus();
  });
}

Status PgCodeToolStore::Reject(const std::string& id, const std::string& actor, const std::string& reason) {
  AIRLOCK_RETURN_IF_ERROR(CheckActor(actor, "rejecter"));
  AIRLOCK_RETURN_IF_ERROR(NoNul({{"rejecter", &actor}, {"reason", &reason}}));
  const int64_t now = options_.now_ms();
  return Change([&](pqxx::transaction_base& tx) -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetIn(tx, id));
    AIRLOCK_RETURN_IF_ERROR(CheckReject(t, actor));
    tx.exec_params("UPDATE code_tools SET state = 'rejected', decided_by = $2::text, decided_at = $3::bigint, "
                   "reason = $4::text WHERE id = $1::text",
                   id, actor, now, reason);
    return OkStatus();
  });
}

Status PgCodeToolStore::Revoke(const std::string& id, const std::string& actor, const std::string& reason) {
  AIRLOCK_RETURN_IF_ERROR(CheckActor(actor, "revoker"));
  AIRLOCK_RETURN_IF_ERROR(NoNul({{"revoker", &actor}, {"reason", &reason}}));
  const int64_t now = options_.now_ms();
  return Change([&](pqxx::transaction_base& tx) -> Status {
    AIRLOCK_ASSIGN_OR_RETURN(CodeTool t, GetIn(tx, id));
    AIRLOCK_RETURN_IF_ERROR(CheckRevoke(t));
    tx.exec_params("UPDATE code_tools SET state = 'revoked', decided_by = $2::text, decided_at = $3::bigint, "
                   "reason = $4::text WHERE id = $1::text",
                   id, actor, now, reason);
    return OkStatus();
  });
}

StatusOr<CodeTool> PgCodeToolStore::Get(const std::string& id) {
  StatusOr<CodeTool> out = NotFound("no code tool " + id);
  AIRLOCK_RETURN_IF_ERROR(db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    out = GetIn(tx, id);
    return OkStatus();
  }));
  return out;
}

StatusOr<std::vector<CodeTool>> PgCodeToolStore::List(std::optional<State> state, const std::string& endpoint) {
  if (HasNul(endpoint)) return std::vector<CodeTool>{};
  std::vector<CodeTool> rows;
  AIRLOCK_RETURN_IF_ERROR(db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    rows = Select(tx, "($1::text = '' OR state = $1::text) AND ($2::text = '' OR endpoint = $2::text)",
                  {state ? StateName(*state) : "", endpoint});
    return OkStatus();
  }));
  return rows;
}

StatusOr<std::vector<CodeTool>> PgCodeToolStore::Active(const std::string& endpoint) {
  if (HasNul(endpoint)) return std::vector<CodeTool>{};
  std::vector<CodeTool> rows;
  AIRLOCK_RETURN_IF_ERROR(db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    rows = Select(tx, "state = 'approved' AND endpoint = $1::text", {endpoint});
    return OkStatus();
  }));
  return NewestIntactPerName(std::move(rows));
}

int64_t PgCodeToolStore::Generation() {
  int64_t counter = -1;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    pqxx::result r = tx.exec("SELECT generation FROM code_tools_meta WHERE singleton = 1");
    counter = r.empty() ? -1 : r[0][0].as<int64_t>();
    return OkStatus();
  });
  std::lock_guard<std::mutex> lock(mu_);
  if (st.ok() && counter != seen_counter_) {
    if (seen_counter_ != -1) ++generation_;
    seen_counter_ = counter;
  }
  return generation_;
}

}  // namespace airlock::codetools
