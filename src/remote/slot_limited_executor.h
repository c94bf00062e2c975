// A CodeExecutor decorator that lets at most N runs execute at once across
// every caller: the runner host's own bound (`--max-concurrent`), whatever
// the number of gateways sending it runs. A run over the bound waits
// (reported as progress "queued") until a slot frees or it is cancelled.
// Sessions, languages and health pass straight through.
//
//   SlotLimitedExecutor bounded(*local_executor, /*slots=*/4);
#ifndef AIRLOCK_REMOTE_SLOT_LIMITED_EXECUTOR_H_
#define AIRLOCK_REMOTE_SLOT_LIMITED_EXECUTOR_H_

#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "runtimes/code_executor.h"

namespace airlock::remote {

class SlotLimitedExecutor : public runtimes::CodeExecutor {
 public:
  SlotLimitedExecutor(runtimes::CodeExecutor& inner, size_t slots);

  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                          CancelToken& cancel, runtimes::BridgeHandler* bridge = nullptr) override;
  std::vector<runtimes::LanguageInfo> Languages() override { return inner_.Languages(); }
  Status OpenSession(const runtimes::SessionSpec& spec) override { return inner_.OpenSession(spec); }
  Status CloseSession(const std::string& id) override { return inner_.CloseSession(id); }
  Status PauseSession(const std::string& id) override { return inner_.PauseSession(id); }
  Status ResumeSession(const std::string& id) override { return inner_.ResumeSession(id); }
  Status ForkSession(const std::string& id, const runtimes::SessionSpec& copy) override {
    return inner_.ForkSession(id, copy);
  }
  StatusOr<runtimes::SessionImageChunk> ExportSession(const std::string& id, uint64_t offset) override {
    return inner_.ExportSession(id, offset);
  }
  Status ImportSession(const runtimes::SessionSpec& spec, uint64_t offset, const std::string& data,
                       bool last) override {
    return inner_.ImportSession(spec, offset, data, last);
  }
  // The inner executor's, plus {"slots", "running", "waiting"}.
  nlohmann::json Health() override;

 private:
  runtimes::CodeExecutor& inner_;
  const size_t slots_;
  std::mutex mu_;
  std::condition_variable freed_;
  size_t running_ = 0;
  size_t waiting_ = 0;
};

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_SLOT_LIMITED_EXECUTOR_H_
