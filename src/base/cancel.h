// A cancellation signal that one thread raises and another waits on with poll.
//
// The token owns an eventfd: Cancel() makes it readable, so a supervisor loop
// blocked in epoll wakes at once. Cancel() is thread-safe and idempotent.
#ifndef AIRLOCK_BASE_CANCEL_H_
#define AIRLOCK_BASE_CANCEL_H_

#include <atomic>
#include <string>

#include "base/unique_fd.h"

namespace airlock {

class CancelToken {
 public:
  CancelToken();
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Readable once cancelled; never read from it.
  int fd() const { return fd_.get(); }

 private:
  std::atomic<bool> cancelled_{false};
  UniqueFd fd_;
};

}  // namespace airlock

#endif  // AIRLOCK_BASE_CANCEL_H_
