// A real PostgreSQL 15 for the unit tests (issue 22): one throwaway server
// per test process, started by tests/pg/pg_server.sh on first use, in a
// temporary directory, on a free port, with no system service. It is
// stopped (and its directory removed) when the tests end, and by a
// watchdog should the process die first. Every test gets a database of its
// own, so tests are independent.
//
//   class MyPgTest : public ::testing::Test {
//     void SetUp() override {
//       dsn_ = testing::PgTestServer::Get().NewDatabase();
//       ASSERT_FALSE(dsn_.empty()) << testing::PgTestServer::Get().error();
//     }
//   };
//
// A server that cannot start fails the test with the reason (never a skip:
// postgresql-15 is a build dependency, scripts/setup.sh installs it). The
// implementation is in pg_server_test.cc.
#ifndef AIRLOCK_TESTS_UNIT_PG_TEST_SERVER_H_
#define AIRLOCK_TESTS_UNIT_PG_TEST_SERVER_H_

#include <mutex>
#include <string>

namespace airlock::testing {

class PgTestServer {
 public:
  // The process's server; starts it on the first call.
  static PgTestServer& Get();

  // Why the server is not running; "" when it is.
  const std::string& error() const { return error_; }
  // The DSN pg_server.sh printed (database "airlock", role "airlock",
  // password authentication over TCP).
  const std::string& dsn() const { return dsn_; }
  const std::string& dir() const { return dir_; }
  int port() const { return port_; }

  // A new, empty database owned by the role airlock; its DSN. "" on error
  // (error() says why; the test should fail).
  std::string NewDatabase();
  // The superuser over the unix socket (trusted): for what the role
  // airlock may not do (terminating its connections, say).
  std::string SuperuserDsn(const std::string& dbname = "postgres") const;

  // Stops the server and removes its directory (idempotent).
  void Stop();
  // Stop() if a server was started (after the last test).
  static void StopIfStarted();

  // The database name of `dsn` (its dbname=).
  static std::string DatabaseOf(const std::string& dsn);

 private:
  PgTestServer() = default;
  static PgTestServer& Instance();
  void Start();

  std::mutex mu_;
  bool started_ = false;
  std::string error_, dsn_, dir_;
  int port_ = 0;
  int databases_ = 0;
};

}  // namespace airlock::testing

#endif  // AIRLOCK_TESTS_UNIT_PG_TEST_SERVER_H_
