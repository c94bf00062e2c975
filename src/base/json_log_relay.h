// `--log-format json`: every line airlock serve's process tree writes to
// stderr becomes one JSON object per line — its own messages, the runner's,
// and the connectors' captured stderr alike — without each of them knowing
// about formats.
//
// Start() puts a pipe on fd 2 (children inherit it) and a thread that reads
// it line by line and writes each to the real stderr as
//   {"time": "2026-12-04T12:00:00.123Z", "level": "info|warning|error",
//    "event": "server|runner|runner_client|connector", "message": "...", ...}
// ("connector" lines also carry "connector"). A line that already is a JSON
// object (LogEvent below) passes through as it is. Destroying the relay
// puts the real stderr back on fd 2 and writes out what is left.
//
//   AIRLOCK_ASSIGN_OR_RETURN(std::unique_ptr<JsonLogRelay> relay, JsonLogRelay::Start());
//   std::cerr << "airlock: listening\n";                     // -> {"event":"server",...}
//   LogEvent("tool_call", {{"run_id", "r_1"}, {"status", "ok"}});   // one JSON line
#ifndef AIRLOCK_BASE_JSON_LOG_RELAY_H_
#define AIRLOCK_BASE_JSON_LOG_RELAY_H_

#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/unique_fd.h"

namespace airlock {

class JsonLogRelay {
 public:
  static StatusOr<std::unique_ptr<JsonLogRelay>> Start();
  ~JsonLogRelay();
  JsonLogRelay(const JsonLogRelay&) = delete;
  JsonLogRelay& operator=(const JsonLogRelay&) = delete;

 private:
  JsonLogRelay(UniqueFd real_stderr, UniqueFd pipe_read, UniqueFd stop);
  void Loop();

  UniqueFd real_stderr_;  // the stderr fd 2 had before
  UniqueFd pipe_read_;
  UniqueFd stop_;         // eventfd: readable once the relay is being destroyed
  std::thread thread_;
};

// One text line as the JSON object the relay writes (exposed for tests).
nlohmann::json JsonLogLine(std::string_view line, int64_t unix_ms);

// Writes {"time", "level": "info", "event": event, ...fields} as one line
// with one write(2) to fd 2 (whatever is there: the relay's pipe passes it
// through).
void LogEvent(std::string_view event, const nlohmann::json& fields);

}  // namespace airlock

#endif  // AIRLOCK_BASE_JSON_LOG_RELAY_H_
