// Length-prefixed JSON frames over a stream socket: the wire format between
// `airlock serve` and its runner process, and of the code-mode bridge
// between a jailed program and airlock.
//
// A frame is a 4-byte big-endian payload length followed by that many bytes
// of UTF-8 JSON. The reader checks the length against a maximum BEFORE it
// allocates anything, so a corrupt or hostile peer cannot make it reserve
// gigabytes. After any read error the stream position is unknown: the caller
// must stop using the channel.
//
//   AIRLOCK_RETURN_IF_ERROR(WriteJsonFrame(fd, {{"type", "ping"}, {"id", 1}}));
//   AIRLOCK_ASSIGN_OR_RETURN(nlohmann::json reply, ReadJsonFrame(fd));
//
// All calls block, retry on EINTR and finish partial reads and writes. A
// closed peer is reported as Unavailable. Writes never raise SIGPIPE on
// sockets. Callers that write from several threads serialise them.
#ifndef AIRLOCK_BASE_FRAME_H_
#define AIRLOCK_BASE_FRAME_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/unique_fd.h"

namespace airlock {

inline constexpr size_t kDefaultMaxFrameBytes = size_t{64} << 20;  // 64 MiB
inline constexpr size_t kFrameHeaderBytes = 4;

// Writes one frame carrying `payload`. InvalidArgument if it exceeds
// `max_bytes` (nothing is written then); Unavailable if the peer is gone.
Status WriteFrame(int fd, std::string_view payload, size_t max_bytes = kDefaultMaxFrameBytes);

// WriteFrame in two steps, for a writer that queues what it cannot send at
// once: the frame's bytes (header and payload; InvalidArgument over
// `max_bytes`), then writing any run of them (a whole frame or its tail).
StatusOr<std::string> EncodeFrame(std::string_view payload, size_t max_bytes = kDefaultMaxFrameBytes);
Status WriteEncoded(int fd, std::string_view bytes);

// Reads one frame's payload. Unavailable if the peer closed (cleanly between
// frames or in the middle of one); ResourceExhausted if the announced length
// exceeds `max_bytes` (the payload is neither allocated nor read).
StatusOr<std::string> ReadFrame(int fd, size_t max_bytes = kDefaultMaxFrameBytes);

// JSON conveniences. Ill-formed UTF-8 in strings is replaced, never thrown;
// a payload that is not a JSON object is InvalidArgument (the channel stays
// usable: the frame was fully consumed).
Status WriteJsonFrame(int fd, const nlohmann::json& message,
                      size_t max_bytes = kDefaultMaxFrameBytes);
StatusOr<nlohmann::json> ReadJsonFrame(int fd, size_t max_bytes = kDefaultMaxFrameBytes);

// Descriptors with frames (AF_UNIX sockets only). WriteJsonFrameWithFd
// sends `pass_fd` (SCM_RIGHTS) with the frame's first bytes, in one
// sendmsg, so it arrives while the reader reads that frame's header. The
// `received` variant of ReadJsonFrame reads with recvmsg and appends what
// came with the frame (close-on-exec); frames read without it drop any
// descriptor sent to them (the kernel closes it).
Status WriteJsonFrameWithFd(int fd, const nlohmann::json& message, int pass_fd,
                            size_t max_bytes = kDefaultMaxFrameBytes);
StatusOr<nlohmann::json> ReadJsonFrame(int fd, size_t max_bytes, std::vector<UniqueFd>* received);

}  // namespace airlock

#endif  // AIRLOCK_BASE_FRAME_H_
