#include "gateway/sse_parser.h"

namespace airlock::gateway {

bool SseParser::Feed(std::string_view bytes) {
  for (char c : bytes) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      skip_lf_ = (c == '\r');
      Line(buffer_);
      buffer_.clear();
      continue;
    }
    buffer_.push_back(c);
    if (buffer_.size() > kMaxLineBytes) return false;
  }
  return true;
}

void SseParser::Line(std::string_view line) {
  if (line.empty()) {  // dispatch
    if (has_data_) {
      if (!current_.id.empty()) last_event_id_ = current_.id;
      handler_(current_);
    }
    current_ = SseEvent();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment / keep-alive
  std::string_view field = line;
  std::string_view value;
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) current_.data.push_back('\n');
    current_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    current_.event = std::string(value);
  } else if (field == "id") {
    current_.id = std::string(value);
  }  // "retry" and unknown fields are ignored
}

}  // namespace airlock::gateway
