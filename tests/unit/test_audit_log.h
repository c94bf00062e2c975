// A fail-closed SQLite audit log in a fresh temporary directory, removed
// with it, and the kinds of the events it holds: for tests that check what
// was audited.
#ifndef AIRLOCK_TESTS_UNIT_TEST_AUDIT_LOG_H_
#define AIRLOCK_TESTS_UNIT_TEST_AUDIT_LOG_H_

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "audit/audit_log.h"
#include "audit/sqlite_audit_store.h"

namespace airlock::tests {

class TempAuditLog {
 public:
  explicit TempAuditLog(const std::string& name) {
    dir_ = std::filesystem::temp_directory_path() / ("airlock_" + name + "_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    auto store = audit::SqliteAuditStore::Open((dir_ / "audit.db").string(), {});
    if (store.ok()) log_ = std::make_unique<audit::AuditLog>(std::move(store).value(), /*fail_closed=*/true);
  }
  ~TempAuditLog() {
    log_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempAuditLog(const TempAuditLog&) = delete;
  TempAuditLog& operator=(const TempAuditLog&) = delete;

  audit::AuditLog* get() { return log_.get(); }  // null if the store could not be opened

  // The kinds of every event row, oldest first.
  std::vector<std::string> EventKinds() {
    std::vector<std::string> kinds;
    if (!log_) return kinds;
    auto rows = log_->store()->Query({});
    if (!rows.ok()) return kinds;
    for (const audit::AuditRow& r : *rows) {
      if (r.event() != nullptr) kinds.push_back(r.event()->kind);
    }
    return kinds;
  }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<audit::AuditLog> log_;
};

}  // namespace airlock::tests

#endif  // AIRLOCK_TESTS_UNIT_TEST_AUDIT_LOG_H_
