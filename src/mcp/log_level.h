// MCP logging levels (RFC 5424 severities, lowest first).
#ifndef AIRLOCK_MCP_LOG_LEVEL_H_
#define AIRLOCK_MCP_LOG_LEVEL_H_

#include <optional>
#include <string>

namespace airlock::mcp {

enum class LogLevel { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };

const char* LogLevelName(LogLevel level);
std::optional<LogLevel> LogLevelFromName(const std::string& name);

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_LOG_LEVEL_H_
