#include "mcp/log_level.h"

namespace airlock::mcp {
namespace {
constexpr const char* kNames[] = {"debug", "info",     "notice", "warning",
                                  "error", "critical", "alert",  "emergency"};
}  // namespace

const char* LogLevelName(LogLevel level) { return kNames[static_cast<int>(level)]; }

std::optional<LogLevel> LogLevelFromName(const std::string& name) {
  for (int i = 0; i < 8; ++i) {
    if (name == kNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

}  // namespace airlock::mcp
