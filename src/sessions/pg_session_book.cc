#include "sessions/pg_session_book.h"

#include "db/pg_migrations.h"

namespace airlock::sessions {
namespace {

using state::PgDatabase;

constexpr char kColumns[] =
    "id, owner, endpoint, language, isolation, memory_mb, idle_timeout_s, created_ms, last_used_ms, expires_ms, "
    "ends_ms, calls, calls_in_flight, lost_reason, starting, runner_host, mode";

// A usable row (`now`: the parameter holding the time): not starting, not expired.
std::string Usable(const char* now) {
  return std::string("NOT starting AND ends_ms > ") + now + " AND (calls_in_flight > 0 OR expires_ms > " + now + ")";
}

// The idle deadline at $N (now), never past the end of the lifetime.
std::string Touch(const char* now) {
  return std::string("last_used_ms = ") + now + ", expires_ms = LEAST(" + now + " + idle_timeout_s * 1000, ends_ms)";
}

SessionInfo ReadRow(const pqxx::row& r) {
  SessionInfo s;
  s.id = r[0].as<std::string>();
  s.owner = r[1].as<std::string>();
  s.endpoint = r[2].as<std::string>();
  s.language = r[3].as<std::string>();
  s.isolation = r[4].as<std::string>();
  s.memory_mb = static_cast<uint64_t>(r[5].as<int64_t>());
  s.idle_timeout_s = static_cast<uint64_t>(r[6].as<int64_t>());
  s.created_at_ms = r[7].as<int64_t>();
  s.last_used_ms = r[8].as<int64_t>();
  s.expires_at_ms = r[9].as<int64_t>();
  s.ends_at_ms = r[10].as<int64_t>();
  s.calls = static_cast<uint64_t>(r[11].as<int64_t>());
  s.calls_in_flight = r[12].as<int>();
  s.lost_reason = r[13].as<std::string>();
  s.starting = r[14].as<bool>();
  s.runner_host = r[15].as<std::string>();
  s.mode = r[16].as<std::string>();
  return s;
}

// Runs one statement that changes at most one row, RETURNING kColumns, in a
// transaction of its own: the row it changed, or nullopt if none matched.
template <typename... Args>
StatusOr<std::optional<SessionInfo>> ChangeOneRow(state::PgDatabase& db, const std::string& sql, const Args&... args) {
  std::optional<SessionInfo> out;
  Status st = db.Transact([&](pqxx::transaction_base& tx) -> Status {
    out.reset();
    pqxx::result r = tx.exec_params(sql, args...);
    if (!r.empty()) out = ReadRow(r[0]);
    return OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

// PostgreSQL text cannot hold NUL: a reason (from a runner's message) gets
// U+FFFD in its place.
std::string WithoutNul(std::string s) {
  for (size_t pos = s.find('\0'); pos != std::string::npos; pos = s.find('\0', pos)) s.replace(pos, 1, "\xEF\xBF\xBD");
  return s;
}

}  // namespace

StatusOr<std::unique_ptr<PgSessionBook>> PgSessionBook::Open(std::shared_ptr<PgDatabase> db, std::string gateway) {
  if (db == nullptr) return InvalidArgument("session book: no database");
  AIRLOCK_RETURN_IF_ERROR(state::MigratePg(*db));
  return std::unique_ptr<PgSessionBook>(new PgSessionBook(std::move(db), WithoutNul(std::move(gateway))));
}

Status PgSessionBook::Reserve(const SessionInfo& row, uint64_t max_per_caller, uint64_t max_total) {
  for (const std::string* f : {&row.id, &row.owner, &row.endpoint, &row.language, &row.isolation, &row.mode}) {
    if (state::HasNul(*f)) return InvalidArgument("session fields cannot hold a NUL byte");
  }
  return db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    // Every gateway's opens, one at a time: the limits count all of them.
    tx.exec("SELECT pg_advisory_xact_lock(hashtext('airlock:code_sessions'))");
    const pqxx::row counts = tx.exec_params1(
        "SELECT count(*) FILTER (WHERE owner = $1), count(*) FROM code_sessions", row.owner);
    const int64_t mine = counts[0].as<int64_t>();
    const int64_t total = counts[1].as<int64_t>();
    if (static_cast<uint64_t>(mine) >= max_per_caller) {
      return ResourceExhausted("you have " + std::to_string(mine) +
                               " open sessions, the maximum per caller; close one (close_session) first");
    }
    if (static_cast<uint64_t>(total) >= max_total) {
      return ResourceExhausted("the server holds its maximum of " + std::to_string(max_total) +
                               " open sessions; try again later");
    }
    pqxx::result r = tx.exec_params(
        "INSERT INTO code_sessions (id, owner, endpoint, language, isolation, memory_mb, idle_timeout_s, created_ms, "
        "last_used_ms, expires_ms, ends_ms, starting, opened_by, mode) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, true, $12, $13) ON CONFLICT (id) DO NOTHING",
        row.id, row.owner, row.endpoint, row.language, row.isolation, static_cast<int64_t>(row.memory_mb),
        static_cast<int64_t>(row.idle_timeout_s), row.created_at_ms, row.last_used_ms, row.expires_at_ms,
        row.ends_at_ms, gateway_, row.mode);
    if (r.affected_rows() != 1) return Internal("duplicate session id");
    return OkStatus();
  });
}

StatusOr<SessionInfo> PgSessionBook::Activate(const std::string& id, const std::string& runner_host, int64_t now_ms,
                                              uint64_t max_lifetime_s) {
  AIRLOCK_ASSIGN_OR_RETURN(
      std::optional<SessionInfo> out,
      ChangeOneRow(*db_,
                   std::string("UPDATE code_sessions SET starting = false, runner_host = $2, created_ms = $3, "
                               "ends_ms = $4, ") +
                       Touch("$3") + " WHERE id = $1 AND starting RETURNING " + kColumns,
                   id, WithoutNul(runner_host), now_ms, now_ms + static_cast<int64_t>(max_lifetime_s) * 1000));
  if (!out) return NotFound("no such session");
  return *out;
}

void PgSessionBook::Abandon(const std::string& id) {
  (void)db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    tx.exec_params("DELETE FROM code_sessions WHERE id = $1 AND starting", id);
    return OkStatus();
  });
}

StatusOr<SessionInfo> PgSessionBook::BeginCall(const std::string& owner, const std::string& id, int64_t now_ms) {
  if (state::HasNul(owner) || state::HasNul(id)) return NotFound("no such session");
  AIRLOCK_ASSIGN_OR_RETURN(
      std::optional<SessionInfo> out,
      ChangeOneRow(*db_,
                   std::string("UPDATE code_sessions SET calls = calls + 1, calls_in_flight = calls_in_flight + 1, ") +
                       Touch("$3") + " WHERE id = $1 AND owner = $2 AND " + Usable("$3") + " RETURNING " + kColumns,
                   id, owner, now_ms));
  if (!out) return NotFound("no such session");
  return *out;
}

void PgSessionBook::EndCall(const std::string& id, int64_t now_ms) {
  if (state::HasNul(id)) return;
  (void)db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    tx.exec_params(std::string("UPDATE code_sessions SET calls_in_flight = GREATEST(calls_in_flight - 1, 0), ") +
                       Touch("$2") + " WHERE id = $1",
                   id, now_ms);
    return OkStatus();
  });
}

std::optional<SessionInfo> PgSessionBook::NoteLost(const std::string& id, const std::string& reason) {
  if (state::HasNul(id)) return std::nullopt;
  StatusOr<std::optional<SessionInfo>> out =
      ChangeOneRow(*db_,
                   std::string("UPDATE code_sessions SET lost_reason = $2 WHERE id = $1 AND lost_reason = '' "
                               "RETURNING ") +
                       kColumns,
                   id, WithoutNul(reason.empty() ? "lost" : reason));
  return out.ok() ? *out : std::nullopt;
}

std::optional<SessionInfo> PgSessionBook::Rehome(const std::string& id, const std::string& from,
                                                 const std::string& to) {
  if (state::HasNul(id) || state::HasNul(from) || state::HasNul(to)) return std::nullopt;
  StatusOr<std::optional<SessionInfo>> out =
      ChangeOneRow(*db_,
                   std::string("UPDATE code_sessions SET runner_host = $3 WHERE id = $1 AND runner_host = $2 "
                               "RETURNING ") +
                       kColumns,
                   id, from, to);
  return out.ok() ? *out : std::nullopt;
}

StatusOr<SessionInfo> PgSessionBook::Remove(const std::string& owner, const std::string& id, int64_t now_ms) {
  if (state::HasNul(owner) || state::HasNul(id)) return NotFound("no such session");
  AIRLOCK_ASSIGN_OR_RETURN(
      std::optional<SessionInfo> out,
      ChangeOneRow(*db_,
                   std::string("DELETE FROM code_sessions WHERE id = $1 AND owner = $2 AND ") + Usable("$3") +
                       " RETURNING " + kColumns,
                   id, owner, now_ms));
  if (!out) return NotFound("no such session");
  return *out;
}

std::vector<SessionInfo> PgSessionBook::List(const std::string& owner, int64_t now_ms) {
  std::vector<SessionInfo> out;
  if (state::HasNul(owner)) return out;
  (void)db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    out.clear();
    for (const pqxx::row& r : tx.exec_params(std::string("SELECT ") + kColumns +
                                                 " FROM code_sessions WHERE owner = $1 AND " + Usable("$2") +
                                                 " ORDER BY id",
                                             owner, now_ms)) {
      out.push_back(ReadRow(r));
    }
    return OkStatus();
  });
  return out;
}

size_t PgSessionBook::Count() {
  int64_t n = 0;
  Status st = db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    n = tx.exec1("SELECT count(*) FROM code_sessions")[0].as<int64_t>();
    return OkStatus();
  });
  return st.ok() ? static_cast<size_t>(n) : 0;
}

std::vector<SessionInfo> PgSessionBook::ClaimExpired(int64_t now_ms) {
  std::vector<SessionInfo> out;
  (void)db_->Transact([&](pqxx::transaction_base& tx) -> Status {
    out.clear();
    // Rows another gateway is claiming (or calling) right now are skipped,
    // not waited for: each expired row goes to one gateway only.
    for (const pqxx::row& r : tx.exec_params(
             std::string("DELETE FROM code_sessions WHERE id IN (SELECT id FROM code_sessions WHERE "
                         "ends_ms <= $1 OR (NOT starting AND calls_in_flight = 0 AND expires_ms <= $1) "
                         "FOR UPDATE SKIP LOCKED) RETURNING ") +
                 kColumns,
             now_ms)) {
      out.push_back(ReadRow(r));
    }
    return OkStatus();
  });
  return out;
}

}  // namespace airlock::sessions
