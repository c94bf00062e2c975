#include "remote/slot_limited_executor.h"

#include <algorithm>
#include <chrono>

namespace airlock::remote {

SlotLimitedExecutor::SlotLimitedExecutor(runtimes::CodeExecutor& inner, size_t slots)
    : inner_(inner), slots_(std::max<size_t>(1, slots)) {}

runtimes::RunResult SlotLimitedExecutor::Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                                             CancelToken& cancel, runtimes::BridgeHandler* bridge) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (running_ >= slots_) {
      ++waiting_;
      lock.unlock();
      if (progress) progress(runtimes::RunPhase::kQueued);
      lock.lock();
      // The cancel token has no condition variable: look at it often.
      while (running_ >= slots_ && !cancel.cancelled()) freed_.wait_for(lock, std::chrono::milliseconds(20));
      --waiting_;
      if (cancel.cancelled()) {
        runtimes::RunResult r = runtimes::InternalErrorResult(request.language, "cancelled", "the run was cancelled");
        return r;
      }
    }
    ++running_;
  }
  struct Release {
    SlotLimitedExecutor* self;
    ~Release() {
      std::lock_guard<std::mutex> lock(self->mu_);
      --self->running_;
      self->freed_.notify_one();
    }
  } release{this};
  return inner_.Run(request, progress, cancel, bridge);
}

nlohmann::json SlotLimitedExecutor::Health() {
  nlohmann::json h = inner_.Health();
  if (!h.is_object()) h = nlohmann::json::object();
  std::lock_guard<std::mutex> lock(mu_);
  h["slots"] = slots_;
  h["running"] = running_;
  h["waiting"] = waiting_;
  return h;
}

}  // namespace airlock::remote
