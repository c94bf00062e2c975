// Shared pieces of the libFuzzer targets (tests/fuzz/*_fuzz.cc).
//
//   FuzzInput in(data, size);
//   uint8_t op = in.Byte();            // 0 once the input is used up
//   std::string rest = in.Rest();
//
// InstantExecutor answers every run at once (the fuzzed code is the
// protocol around it, never a jail); fake_downstream.h has an in-memory MCP
// server behind a gateway::ClientTransport.
#ifndef AIRLOCK_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define AIRLOCK_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtimes/code_executor.h"

namespace airlock::fuzz {

// Consumes a fuzzer's bytes front to back.
class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return size_ - pos_; }
  uint8_t Byte() { return empty() ? 0 : data_[pos_++]; }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | Byte();
    return v;
  }
  uint64_t U64() { return (uint64_t{U32()} << 32) | U32(); }
  // Up to `max` bytes, length from the next byte.
  std::string Bytes(size_t max) {
    size_t n = Byte();
    if (n > max) n = max;
    if (n > remaining()) n = remaining();
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }
  // Everything up to `sep` (not included), or the rest.
  std::string Until(std::string_view sep) {
    std::string_view all(reinterpret_cast<const char*>(data_ + pos_), remaining());
    size_t at = all.find(sep);
    if (at == std::string_view::npos) {
      pos_ = size_;
      return std::string(all);
    }
    pos_ += at + sep.size();
    return std::string(all.substr(0, at));
  }
  std::string Rest() {
    std::string out(reinterpret_cast<const char*>(data_ + pos_), remaining());
    pos_ = size_;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Answers every run at once with its first 64 bytes of code as stdout; offers
// python and c. The targets fuzz the protocol around runs, never a jail.
class InstantExecutor : public runtimes::CodeExecutor {
 public:
  runtimes::RunResult Run(const runtimes::RunRequest& request, const runtimes::ProgressFn& progress,
                          CancelToken& cancel, runtimes::BridgeHandler* bridge) override {
    if (progress) progress(runtimes::RunPhase::kRunning);
    runtimes::RunResult r;
    r.status = runtimes::RunStatus::kOk;
    r.language = request.language;
    r.exit_code = 0;
    r.stdout_text = request.code.substr(0, 64);
    return r;
  }
  std::vector<runtimes::LanguageInfo> Languages() override {
    runtimes::LanguageInfo py;
    py.name = "python";
    py.display_name = "Python";
    py.version = "3.11";
    runtimes::LanguageInfo c;
    c.name = "c";
    c.display_name = "C";
    c.version = "12";
    c.compiled = true;
    return {py, c};
  }
};

}  // namespace airlock::fuzz

#endif  // AIRLOCK_TESTS_FUZZ_FUZZ_SUPPORT_H_
