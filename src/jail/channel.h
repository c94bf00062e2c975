// The supervisor <-> jail-init control channel.
//
// A stream socket carrying messages: a 4-byte big-endian length, then a JSON
// object of that many bytes. File descriptors travel as SCM_RIGHTS attached
// to the length prefix of the message they belong to. Both ends treat every
// incoming message as untrusted: sizes are capped before allocation and
// received fds are owned by UniqueFd immediately.
#ifndef AIRLOCK_JAIL_CHANNEL_H_
#define AIRLOCK_JAIL_CHANNEL_H_

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/unique_fd.h"

namespace airlock::jail {

struct ChannelMessage {
  nlohmann::json body;
  std::vector<UniqueFd> fds;
};

inline constexpr size_t kMaxChannelMessageBytes = 256u << 20;
inline constexpr size_t kMaxChannelFds = 8;

// Sends `body` with `fds` attached (the fds stay owned by the caller).
// Blocking; retries on EINTR and partial writes.
Status SendMessage(int socket_fd, const nlohmann::json& body, const std::vector<int>& fds = {});

// Receives one message. Unavailable on orderly EOF at a message boundary.
StatusOr<ChannelMessage> ReceiveMessage(int socket_fd, size_t max_bytes = kMaxChannelMessageBytes);

}  // namespace airlock::jail

#endif  // AIRLOCK_JAIL_CHANNEL_H_
