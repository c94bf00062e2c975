// Bounds how many audit rows a flood of one kind of unauthenticated event
// can write (refused tokens, say): at most `max_rows` rows per window; the
// events past that are counted, not written, and the count travels in the
// next row that is written ("suppressed_before"), so nothing is lost from
// the record and an attacker cannot fill the log.
//
//   EventCoalescer refused({.max_rows = 30, .window = std::chrono::seconds(60)});
//   uint64_t suppressed = 0;
//   if (refused.Admit(&suppressed)) {
//     detail["suppressed_before"] = suppressed;  // when > 0
//     audit->Event(...);
//   }
//
// Thread-safe, constant memory.
#ifndef AIRLOCK_AUDIT_EVENT_COALESCER_H_
#define AIRLOCK_AUDIT_EVENT_COALESCER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>

namespace airlock::audit {

class EventCoalescer {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    uint64_t max_rows = 30;
    std::chrono::seconds window{60};
    std::function<Clock::time_point()> now = nullptr;  // default: Clock::now (tests inject one)
  };

  explicit EventCoalescer(Options options);

  // True when this event gets its own row now; `*suppressed` is then the
  // number of events since the last row that got none.
  bool Admit(uint64_t* suppressed);

 private:
  Clock::time_point Now() const { return options_.now ? options_.now() : Clock::now(); }

  const Options options_;
  std::mutex mu_;
  Clock::time_point window_start_{};
  bool started_ = false;
  uint64_t rows_ = 0;        // written in the current window
  uint64_t suppressed_ = 0;  // not written since the last row
};

}  // namespace airlock::audit

#endif  // AIRLOCK_AUDIT_EVENT_COALESCER_H_
