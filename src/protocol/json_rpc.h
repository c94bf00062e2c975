// JSON-RPC 2.0 framing for MCP: parse and validate one message, build
// responses, errors and notifications.
//
// Batches (JSON arrays) are refused: MCP removed batching in 2025-06-18 and
// airlock does not offer it to older revisions either (allowed: batching
// was a MAY for servers to *support* receiving, and no client relies on it).
#ifndef AIRLOCK_PROTOCOL_JSON_RPC_H_
#define AIRLOCK_PROTOCOL_JSON_RPC_H_

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace airlock::protocol::jsonrpc {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

enum class Kind { kRequest, kNotification, kResponse };

struct Message {
  Kind kind = Kind::kRequest;
  nlohmann::json id;      // string or integer; null for notifications
  std::string method;     // requests and notifications
  nlohmann::json params;  // object or null
  nlohmann::json result;  // responses
  nlohmann::json error;   // error responses
};

// Either a message or the error response to send back (whose id is the
// request's id when it could be recovered, null otherwise).
struct ParseOutcome {
  std::optional<Message> message;
  nlohmann::json error_response;
};

// Parses and validates one message from text.
ParseOutcome Parse(std::string_view text);
// Validates an already-parsed value.
ParseOutcome Validate(const nlohmann::json& j);

nlohmann::json MakeResult(const nlohmann::json& id, nlohmann::json result);
nlohmann::json MakeError(const nlohmann::json& id, int code, const std::string& message,
                         const nlohmann::json& data = nullptr);
nlohmann::json MakeNotification(const std::string& method, nlohmann::json params);

// True if `j` is a response (success or error) to a request with `id`.
bool IsResponse(const nlohmann::json& j);

// Serializes for the wire: compact, one line, invalid UTF-8 replaced.
std::string Serialize(const nlohmann::json& j);

}  // namespace airlock::protocol::jsonrpc

#endif  // AIRLOCK_PROTOCOL_JSON_RPC_H_
