// An incremental parser for text/event-stream (Server-Sent Events), as used
// by MCP's Streamable HTTP transport: feed it bytes as they arrive, it
// calls back once per complete event.
#ifndef AIRLOCK_GATEWAY_SSE_PARSER_H_
#define AIRLOCK_GATEWAY_SSE_PARSER_H_

#include <functional>
#include <string>
#include <string_view>

namespace airlock::gateway {

struct SseEvent {
  std::string event = "message";  // the "event:" field, "message" by default
  std::string data;               // "data:" lines joined with '\n'
  std::string id;                 // the "id:" field, if any
};

class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;
  explicit SseParser(Handler handler) : handler_(std::move(handler)) {}

  // Feeds bytes. Returns false if a single line exceeds `max_line_bytes`.
  bool Feed(std::string_view bytes);
  // The last event id seen (for Last-Event-ID).
  const std::string& last_event_id() const { return last_event_id_; }

  static constexpr size_t kMaxLineBytes = 64u << 20;

 private:
  void Line(std::string_view line);

  Handler handler_;
  std::string buffer_;
  bool skip_lf_ = false;  // the previous chunk ended with '\r'
  SseEvent current_;
  bool has_data_ = false;
  std::string last_event_id_;
};

}  // namespace airlock::gateway

#endif  // AIRLOCK_GATEWAY_SSE_PARSER_H_
