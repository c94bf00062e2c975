#include "audit/event_coalescer.h"

namespace airlock::audit {

EventCoalescer::EventCoalescer(Options options) : options_(std::move(options)) {}

bool EventCoalescer::Admit(uint64_t* suppressed) {
  const Clock::time_point now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_ || now - window_start_ >= options_.window) {
    started_ = true;
    window_start_ = now;
    rows_ = 0;
  }
  if (rows_ >= options_.max_rows) {
    ++suppressed_;
    return false;
  }
  ++rows_;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

}  // namespace airlock::audit
