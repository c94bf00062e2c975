// Splits a byte stream read in chunks into lines (without the '\n'); a line
// longer than `max_line` is handed on in pieces of that size, so a peer that
// never writes a newline cannot grow the buffer.
//
//   LineSplitter lines;
//   while ((n = read(fd, buf, sizeof buf)) > 0) lines.Feed({buf, n}, emit);
//   lines.Finish(emit);   // the last line, if it had no '\n'
#ifndef AIRLOCK_BASE_LINE_SPLITTER_H_
#define AIRLOCK_BASE_LINE_SPLITTER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace airlock {

class LineSplitter {
 public:
  using Emit = std::function<void(std::string_view line)>;
  explicit LineSplitter(size_t max_line = 65536) : max_line_(max_line) {}

  void Feed(std::string_view data, const Emit& emit) {
    buffer_.append(data);
    size_t start = 0, pos;
    while ((pos = buffer_.find('\n', start)) != std::string::npos) {
      emit(std::string_view(buffer_).substr(start, pos - start));
      start = pos + 1;
    }
    buffer_.erase(0, start);
    while (buffer_.size() > max_line_) {
      emit(std::string_view(buffer_).substr(0, max_line_));
      buffer_.erase(0, max_line_);
    }
  }
  void Finish(const Emit& emit) {
    if (!buffer_.empty()) emit(buffer_);
    buffer_.clear();
  }

 private:
  const size_t max_line_;
  std::string buffer_;
};

}  // namespace airlock

#endif  // AIRLOCK_BASE_LINE_SPLITTER_H_
