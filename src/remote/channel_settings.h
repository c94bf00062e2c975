// Settings both ends of a runner-host connection must agree on: how big a
// gRPC message may be (a runner frame plus the envelope) and how often an
// idle connection is pinged. The runner host accepts pings at the rate the
// gateway sends them; were they set apart, gRPC would close the connection
// for "too many pings".
#ifndef AIRLOCK_REMOTE_CHANNEL_SETTINGS_H_
#define AIRLOCK_REMOTE_CHANNEL_SETTINGS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace airlock::remote {

// Keepalive pings on an idle connection, and how long one may go unanswered.
inline constexpr int kKeepaliveTimeMs = 10000;
inline constexpr int kKeepaliveTimeoutMs = 5000;

// The largest gRPC message for runner frames of up to `max_frame_bytes`.
inline int MaxMessageBytes(size_t max_frame_bytes) {
  return static_cast<int>(std::min<size_t>(max_frame_bytes + (size_t{1} << 16), INT32_MAX));
}

}  // namespace airlock::remote

#endif  // AIRLOCK_REMOTE_CHANNEL_SETTINGS_H_
