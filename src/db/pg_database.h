// A PostgreSQL database that several airlock gateways share (issue 22,
// docs/state.md): connections from a libpq connection string, a small pool,
// transactions that turn libpqxx's exceptions into Status values.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<PgDatabase> db, PgDatabase::Connect(dsn));
//   int64_t n = 0;
//   AIRLOCK_RETURN_IF_ERROR(db->Transact([&](pqxx::transaction_base& tx) {
//     n = tx.exec_params1("SELECT count(*) FROM api_keys WHERE role = $1", role)[0].as<int64_t>();
//     return OkStatus();
//   }));
//
// Connect() opens one connection at once, so an unreachable database is an
// error there (Unavailable, naming the DSN without its password), not at
// first use. Further connections are opened on demand up to
// Options::max_connections and kept; a caller beyond that waits for one.
// A connection found broken (the server restarted, a network cut) is
// dropped and the next transaction opens a new one: when it broke before
// the transaction could commit, the body is run once more on a fresh
// connection; a connection lost during COMMIT is reported (Unavailable,
// "may or may not have been committed") and never retried. Transactions
// that lose a serialization or deadlock race are retried (3 attempts).
//
// Every connection uses UTF-8, names itself "airlock" (unless the DSN sets
// application_name), gives up connecting after Options::connect_timeout_s
// (unless the DSN sets connect_timeout), and sets lock_timeout and
// idle_in_transaction_session_timeout so that a gateway that hangs while
// holding a lock cannot stall the others for ever.
//
// All methods are thread-safe.
#ifndef AIRLOCK_DB_PG_DATABASE_H_
#define AIRLOCK_DB_PG_DATABASE_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <pqxx/pqxx>

#include "base/status.h"

namespace airlock::state {

class PgDatabase {
 public:
  struct Options {
    size_t max_connections = 4;
    int connect_timeout_s = 5;   // unless the DSN names a connect_timeout
    int lock_timeout_s = 30;     // a statement waiting longer for a lock fails
    int idle_in_transaction_timeout_s = 60;  // the server ends such a session
  };

  // Connects to `dsn` (libpq key=value or postgresql:// URI; PG* environment
  // variables fill what it leaves out) and checks the connection.
  static StatusOr<std::shared_ptr<PgDatabase>> Connect(const std::string& dsn, Options options);
  static StatusOr<std::shared_ptr<PgDatabase>> Connect(const std::string& dsn) { return Connect(dsn, Options()); }

  ~PgDatabase();
  PgDatabase(const PgDatabase&) = delete;
  PgDatabase& operator=(const PgDatabase&) = delete;

  // The body's work: statements on `tx`. It must touch nothing but `tx`
  // and assign (not accumulate) its results, since it may run more than
  // once; it returns a non-OK Status to roll back. libpqxx exceptions it
  // throws become the Status of Transact (it should not catch them). It
  // must not use this PgDatabase itself (its connection may be the last).
  using Body = std::function<Status(pqxx::transaction_base& tx)>;

  // One READ COMMITTED read-write transaction: committed if `body` returns
  // OK, rolled back otherwise.
  Status Transact(const Body& body);
  // One REPEATABLE READ, READ ONLY transaction: every statement of `body`
  // sees the same snapshot.
  Status Snapshot(const Body& body);
  // `body` with a connection of its own for its duration, outside any
  // transaction (session-level work such as advisory locks); the
  // connection is closed afterwards. Not retried.
  Status WithConnection(const std::function<Status(pqxx::connection& conn)>& body);

  // The connection string without its password, for messages.
  const std::string& where() const { return where_; }

 private:
  enum class Mode { kReadWrite, kSnapshot };
  PgDatabase(std::string dsn, Options options);
  Status Run(Mode mode, const Body& body);
  StatusOr<std::unique_ptr<pqxx::connection>> NewConnection();
  // A pooled or new connection; waits while max_connections are out.
  StatusOr<std::unique_ptr<pqxx::connection>> Acquire();
  // Returns a connection to the pool, or drops it if it is broken.
  void Release(std::unique_ptr<pqxx::connection> conn, bool broken);

  const std::string dsn_;  // with the defaults added
  const std::string where_;
  const Options options_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  size_t open_ = 0;  // connections idle or in use
};

// `dsn` with a password (key=value, URI user:password@ or ?password=)
// replaced by "***".
std::string RedactDsn(const std::string& dsn);

// `dsn` plus `key=value` unless it already names `key` (either form).
std::string DsnWithDefault(const std::string& dsn, const std::string& key, const std::string& value);

// The Status for an exception thrown by libpqxx (or anything else) while
// talking to the database at `where`: Unavailable for a lost connection,
// InvalidArgument for a value the database refuses to store, Internal for
// other SQL errors (the server's message included).
Status PgStatus(const std::exception& e, const std::string& where);

// PostgreSQL text cannot hold a NUL byte.
inline bool HasNul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

}  // namespace airlock::state

#endif  // AIRLOCK_DB_PG_DATABASE_H_
