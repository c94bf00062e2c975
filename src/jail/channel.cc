#include "jail/channel.h"

#include <sys/socket.h>

#include <cerrno>
#include <string>

#include "base/fd_passing.h"

namespace airlock::jail {
namespace {

static_assert(kMaxChannelFds <= kMaxPassedFds, "one channel message's descriptors go in one sendmsg");

Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("channel send");
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

Status ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = recv(fd, data, size, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("channel recv");
    }
    if (n == 0) return Unavailable("channel closed in the middle of a message");
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

}  // namespace

Status SendMessage(int socket_fd, const nlohmann::json& body, const std::vector<int>& fds) {
  const std::string payload = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (payload.size() > kMaxChannelMessageBytes) return ResourceExhausted("channel message too large");
  if (fds.size() > kMaxChannelFds) return InvalidArgument("too many fds for one channel message");
  unsigned char header[4];
  const uint32_t len = static_cast<uint32_t>(payload.size());
  header[0] = len >> 24; header[1] = len >> 16; header[2] = len >> 8; header[3] = len;

  ssize_t n;
  do {
    n = SendWithFds(socket_fd, reinterpret_cast<const char*>(header), sizeof header, fds.data(), fds.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoError("channel sendmsg");
  if (n < static_cast<ssize_t>(sizeof header)) {
    AIRLOCK_RETURN_IF_ERROR(WriteAll(socket_fd, reinterpret_cast<char*>(header) + n, sizeof header - n));
  }
  return WriteAll(socket_fd, payload.data(), payload.size());
}

StatusOr<ChannelMessage> ReceiveMessage(int socket_fd, size_t max_bytes) {
  ChannelMessage out;
  unsigned char header[4];
  ssize_t n;
  bool truncated = false;
  do {
    n = ReceiveWithFds(socket_fd, reinterpret_cast<char*>(header), sizeof header, &out.fds, &truncated);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoError("channel recvmsg");
  if (n == 0) return Unavailable("channel closed");
  if (truncated) return Internal("channel: control data truncated");
  if (n < static_cast<ssize_t>(sizeof header)) {
    AIRLOCK_RETURN_IF_ERROR(ReadAll(socket_fd, reinterpret_cast<char*>(header) + n, sizeof header - n));
  }
  const uint32_t len = (uint32_t(header[0]) << 24) | (uint32_t(header[1]) << 16) |
                       (uint32_t(header[2]) << 8) | uint32_t(header[3]);
  if (len > max_bytes) return ResourceExhausted("channel message of " + std::to_string(len) + " bytes exceeds the limit");
  std::string payload(len, '\0');
  AIRLOCK_RETURN_IF_ERROR(ReadAll(socket_fd, payload.data(), len));
  out.body = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (out.body.is_discarded() || !out.body.is_object()) return InvalidArgument("channel: malformed message");
  return out;
}

}  // namespace airlock::jail
