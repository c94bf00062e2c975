// A SessionBook in this process's memory (sessions/session_book.h): the
// book of a single gateway (state.backend "sqlite", or a local runner).
// Its sessions end with the process.
//
//   auto book = std::make_shared<MemorySessionBook>();
//   SessionRegistry registry(executor, config.sessions, max_total, audit, book);
#ifndef AIRLOCK_SESSIONS_MEMORY_SESSION_BOOK_H_
#define AIRLOCK_SESSIONS_MEMORY_SESSION_BOOK_H_

#include <map>
#include <mutex>
#include <string>

#include "sessions/session_book.h"

namespace airlock::sessions {

class MemorySessionBook : public SessionBook {
 public:
  bool shared() const override { return false; }
  Status Reserve(const SessionInfo& row, uint64_t max_per_caller, uint64_t max_total) override;
  StatusOr<SessionInfo> Activate(const std::string& id, const std::string& runner_host, int64_t now_ms,
                                 uint64_t max_lifetime_s) override;
  void Abandon(const std::string& id) override;
  StatusOr<SessionInfo> BeginCall(const std::string& owner, const std::string& id, int64_t now_ms) override;
  void EndCall(const std::string& id, int64_t now_ms) override;
  std::optional<SessionInfo> NoteLost(const std::string& id, const std::string& reason) override;
  std::optional<SessionInfo> Rehome(const std::string& id, const std::string& from, const std::string& to) override;
  StatusOr<SessionInfo> Remove(const std::string& owner, const std::string& id, int64_t now_ms) override;
  std::vector<SessionInfo> List(const std::string& owner, int64_t now_ms) override;
  size_t Count() override;
  std::vector<SessionInfo> ClaimExpired(int64_t now_ms) override;
  std::vector<SessionInfo> TakeAll() override;

 private:
  // The usable row `id` of `owner`; null if NotFound by the book's rules.
  SessionInfo* Usable(const std::string& owner, const std::string& id, int64_t now_ms);

  std::mutex mu_;
  std::map<std::string, SessionInfo> rows_;  // by id
};

}  // namespace airlock::sessions

#endif  // AIRLOCK_SESSIONS_MEMORY_SESSION_BOOK_H_
