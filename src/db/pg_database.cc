#include "db/pg_database.h"

#include <cctype>
#include <regex>
#include <utility>

namespace airlock::state {
namespace {

constexpr int kSerializationAttempts = 3;

bool IsUri(const std::string& dsn) {
  return dsn.rfind("postgresql://", 0) == 0 || dsn.rfind("postgres://", 0) == 0;
}

// The keyword=value pairs of a libpq key/value connection string, as
// [begin, end) offsets of each value (quotes included) and its keyword.
struct DsnPair {
  std::string key;
  size_t value_begin = 0, value_end = 0;
};

std::vector<DsnPair> ParseKeyValues(const std::string& dsn) {
  std::vector<DsnPair> out;
  size_t i = 0;
  const size_t n = dsn.size();
  auto space = [&](size_t k) { return k < n && std::isspace(static_cast<unsigned char>(dsn[k])); };
  while (true) {
    while (space(i)) ++i;
    if (i >= n) break;
    DsnPair p;
    while (i < n && dsn[i] != '=' && !space(i)) p.key += dsn[i++];
    while (space(i)) ++i;
    if (i >= n || dsn[i] != '=') break;  // malformed: libpq will say so
    ++i;
    while (space(i)) ++i;
    p.value_begin = i;
    if (i < n && dsn[i] == '\'') {
      ++i;
      while (i < n && dsn[i] != '\'') i += dsn[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, n);
    } else {
      while (i < n && !space(i)) i += dsn[i] == '\\' ? 2 : 1;
      i = std::min(i, n);
    }
    p.value_end = i;
    out.push_back(std::move(p));
  }
  return out;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string RedactDsn(const std::string& dsn) {
  if (IsUri(dsn)) {
    static const std::regex userinfo(R"(^(postgres(?:ql)?://[^:@/?]*):[^@/?]*@)");
    static const std::regex query(R"(([?&]password=)[^&]*)");
    return std::regex_replace(std::regex_replace(dsn, userinfo, "$1:***@"), query, "$1***");
  }
  std::string out = dsn;
  std::vector<DsnPair> pairs = ParseKeyValues(dsn);
  for (auto it = pairs.rbegin(); it != pairs.rend(); ++it) {
    if (it->key == "password") out.replace(it->value_begin, it->value_end - it->value_begin, "***");
  }
  return out;
}

std::string DsnWithDefault(const std::string& dsn, const std::string& key, const std::string& value) {
  if (IsUri(dsn)) {
    if (dsn.find("?" + key + "=") != std::string::npos || dsn.find("&" + key + "=") != std::string::npos) return dsn;
    return dsn + (dsn.find('?') == std::string::npos ? "?" : "&") + key + "=" + value;
  }
  for (const DsnPair& p : ParseKeyValues(dsn)) {
    if (p.key == key) return dsn;
  }
  return dsn + (dsn.empty() ? "" : " ") + key + "=" + value;
}

Status PgStatus(const std::exception& e, const std::string& where) {
  const std::string what = Trimmed(e.what());
  const std::string at = "postgres (" + where + "): ";
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    return Unavailable(at + "connection lost or refused: " + what);
  }
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    return Unavailable(at + "the connection broke during COMMIT; the transaction may or may not have been committed: " +
                       what);
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr) {
    return Unavailable(at + "transaction rolled back by the server: " + what);
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    const std::string& state = sql->sqlstate();
    if (state.rfind("08", 0) == 0 || state.rfind("57P", 0) == 0 || state == "55P03" || state == "53300") {
      return Unavailable(at + what);  // connection, shutdown, lock_timeout, too many connections
    }
    if (state == "57014") return DeadlineExceeded(at + what);  // statement timeout / cancelled
    if (state.rfind("22", 0) == 0) return InvalidArgument(at + what);  // data exception
    return Internal(at + what + (state.empty() ? "" : " (SQLSTATE " + state + ")"));
  }
  return Internal(at + what);
}

PgDatabase::PgDatabase(std::string dsn, Options options)
    : dsn_(std::move(dsn)), where_(RedactDsn(dsn_)), options_(options) {}

PgDatabase::~PgDatabase() = default;

StatusOr<std::shared_ptr<PgDatabase>> PgDatabase::Connect(const std::string& dsn, Options options) {
  std::string full = DsnWithDefault(dsn, "connect_timeout", std::to_string(options.connect_timeout_s));
  full = DsnWithDefault(full, "fallback_application_name", "airlock");
  if (options.max_connections == 0) options.max_connections = 1;
  std::shared_ptr<PgDatabase> db(new PgDatabase(std::move(full), options));
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<pqxx::connection> first, db->Acquire());
  db->Release(std::move(first), /*broken=*/false);
  return db;
}

StatusOr<std::unique_ptr<pqxx::connection>> PgDatabase::NewConnection() {
  try {
    auto conn = std::make_unique<pqxx::connection>(dsn_);
    // A broken connection is replaced by us, with its settings; libpqxx's
    // own silent reconnect would lose them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    conn->inhibit_reactivation(true);
#pragma GCC diagnostic pop
    conn->set_client_encoding("UTF8");
    pqxx::nontransaction setup(*conn);
    setup.exec("SET lock_timeout = '" + std::to_string(options_.lock_timeout_s) + "s'");
    setup.exec("SET idle_in_transaction_session_timeout = '" +
               std::to_string(options_.idle_in_transaction_timeout_s) + "s'");
    setup.commit();
    return conn;
  } catch (const std::exception& e) {
    return PgStatus(e, where_);
  }
}

StatusOr<std::unique_ptr<pqxx::connection>> PgDatabase::Acquire() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    freed_.wait(lock, [this] { return !idle_.empty() || open_ < options_.max_connections; });
    if (!idle_.empty()) {
      std::unique_ptr<pqxx::connection> conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    ++open_;
  }
  StatusOr<std::unique_ptr<pqxx::connection>> conn = NewConnection();
  if (!conn.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    --open_;
    freed_.notify_one();
  }
  return conn;
}

void PgDatabase::Release(std::unique_ptr<pqxx::connection> conn, bool broken) {
  broken = broken || conn == nullptr || !conn->is_open();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken) {
      --open_;
    } else {
      idle_.push_back(std::move(conn));
    }
  }
  freed_.notify_one();
  // A broken connection is closed here, outside the lock.
}

Status PgDatabase::Run(Mode mode, const Body& body) {
  int broken_retries = 1, race_retries = kSerializationAttempts - 1;
  while (true) {
    AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<pqxx::connection> conn, Acquire());
    Status st;
    bool broken = false, retry = false;
    try {
      if (mode == Mode::kSnapshot) {
        pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(*conn);
        st = body(tx);
        if (st.ok()) tx.commit();
      } else {
        pqxx::work tx(*conn);
        st = body(tx);
        if (st.ok()) tx.commit();
      }
    } catch (const pqxx::in_doubt_error& e) {
      broken = true;
      st = PgStatus(e, where_);
    } catch (const pqxx::broken_connection& e) {
      broken = true;
      st = PgStatus(e, where_);
      retry = broken_retries-- > 0;
    } catch (const pqxx::serialization_failure& e) {
      st = PgStatus(e, where_);
      retry = race_retries-- > 0;
    } catch (const pqxx::deadlock_detected& e) {
      st = PgStatus(e, where_);
      retry = race_retries-- > 0;
    } catch (const std::exception& e) {
      st = PgStatus(e, where_);
    }
    Release(std::move(conn), broken);
    if (!retry) return st;
  }
}

Status PgDatabase::Transact(const Body& body) { return Run(Mode::kReadWrite, body); }

Status PgDatabase::Snapshot(const Body& body) { return Run(Mode::kSnapshot, body); }

Status PgDatabase::WithConnection(const std::function<Status(pqxx::connection&)>& body) {
  AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<pqxx::connection> conn, Acquire());
  Status st;
  try {
    st = body(*conn);
  } catch (const std::exception& e) {
    st = PgStatus(e, where_);
  }
  // Closed rather than pooled: whatever the body left in the session
  // (a lock, a setting) goes with it.
  Release(std::move(conn), /*broken=*/true);
  return st;
}

}  // namespace airlock::state
