#include "base/frame.h"

#include "base/fd_passing.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace airlock {
namespace {

// Writes all of `data`; uses send(MSG_NOSIGNAL) so a dead peer is EPIPE, not
// SIGPIPE, and falls back to write() for non-sockets (pipes in tests).
Status WriteAll(int fd, const char* data, size_t size) {
  bool is_socket = true;
  while (size > 0) {
    ssize_t n = is_socket ? ::send(fd, data, size, MSG_NOSIGNAL) : ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ENOTSOCK && is_socket) {
        is_socket = false;
        continue;
      }
      if (errno == EPIPE || errno == ECONNRESET) return Unavailable("peer closed the channel");
      return ErrnoError("write frame");
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

// Reads exactly `size` bytes. `*got_any` tells a clean EOF from a torn one.
// `received` (non-null): read with recvmsg, keeping descriptors that come
// along (at most a few per read; more are closed by the kernel).
Status ReadAll(int fd, char* data, size_t size, bool* got_any, std::vector<UniqueFd>* received = nullptr) {
  *got_any = false;
  while (size > 0) {
    const ssize_t n = received == nullptr ? ::read(fd, data, size) : ReceiveWithFds(fd, data, size, received);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) return Unavailable("peer reset the channel");
      return ErrnoError("read frame");
    }
    if (n == 0) return Unavailable("peer closed the channel");
    *got_any = true;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::string> EncodeFrame(std::string_view payload, size_t max_bytes) {
  if (payload.size() > max_bytes || payload.size() > UINT32_MAX) {
    return InvalidArgument("frame of " + std::to_string(payload.size()) +
                           " bytes exceeds the maximum of " + std::to_string(max_bytes));
  }
  const uint32_t len = static_cast<uint32_t>(payload.size());
  std::string buf;
  buf.reserve(kFrameHeaderBytes + payload.size());
  buf.push_back(static_cast<char>(len >> 24));
  buf.push_back(static_cast<char>(len >> 16));
  buf.push_back(static_cast<char>(len >> 8));
  buf.push_back(static_cast<char>(len));
  buf.append(payload);
  return buf;
}

Status WriteEncoded(int fd, std::string_view bytes) { return WriteAll(fd, bytes.data(), bytes.size()); }

namespace {

StatusOr<std::string> Dumped(const nlohmann::json& message) {
  try {
    return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {
    return Internal(std::string("cannot serialise frame: ") + e.what());
  }
}

}  // namespace

Status WriteFrame(int fd, std::string_view payload, size_t max_bytes) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string buf, EncodeFrame(payload, max_bytes));
  return WriteAll(fd, buf.data(), buf.size());
}

Status WriteJsonFrameWithFd(int fd, const nlohmann::json& message, int pass_fd, size_t max_bytes) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string payload, Dumped(message));
  AIRLOCK_ASSIGN_OR_RETURN(std::string buf, EncodeFrame(payload, max_bytes));
  ssize_t n;
  do {
    n = SendWithFd(fd, buf.data(), buf.size(), pass_fd);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EPIPE || errno == ECONNRESET) return Unavailable("peer closed the channel");
    return ErrnoError("sendmsg frame");
  }
  return WriteAll(fd, buf.data() + n, buf.size() - static_cast<size_t>(n));
}

namespace {

StatusOr<std::string> ReadFramePayload(int fd, size_t max_bytes, std::vector<UniqueFd>* received) {
  unsigned char header[kFrameHeaderBytes];
  bool got_any = false;
  Status st = ReadAll(fd, reinterpret_cast<char*>(header), sizeof header, &got_any, received);
  if (!st.ok()) {
    if (st.code() == StatusCode::kUnavailable && got_any) {
      return Unavailable("peer closed the channel in the middle of a frame header");
    }
    return st;
  }
  const size_t len = (size_t{header[0]} << 24) | (size_t{header[1]} << 16) |
                     (size_t{header[2]} << 8) | size_t{header[3]};
  if (len > max_bytes) {
    return ResourceExhausted("incoming frame of " + std::to_string(len) +
                             " bytes exceeds the maximum of " + std::to_string(max_bytes));
  }
  std::string payload(len, '\0');
  st = ReadAll(fd, payload.data(), len, &got_any, received);
  if (!st.ok()) {
    if (st.code() == StatusCode::kUnavailable) {
      return Unavailable("peer closed the channel in the middle of a frame");
    }
    return st;
  }
  return payload;
}

StatusOr<nlohmann::json> ParsedObject(const std::string& payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("frame payload is not valid JSON");
  if (!j.is_object()) return InvalidArgument("frame payload is not a JSON object");
  return j;
}

}  // namespace

StatusOr<std::string> ReadFrame(int fd, size_t max_bytes) { return ReadFramePayload(fd, max_bytes, nullptr); }

Status WriteJsonFrame(int fd, const nlohmann::json& message, size_t max_bytes) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string payload, Dumped(message));
  return WriteFrame(fd, payload, max_bytes);
}

StatusOr<nlohmann::json> ReadJsonFrame(int fd, size_t max_bytes) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string payload, ReadFramePayload(fd, max_bytes, nullptr));
  return ParsedObject(payload);
}

StatusOr<nlohmann::json> ReadJsonFrame(int fd, size_t max_bytes, std::vector<UniqueFd>* received) {
  AIRLOCK_ASSIGN_OR_RETURN(std::string payload, ReadFramePayload(fd, max_bytes, received));
  return ParsedObject(payload);
}

}  // namespace airlock
