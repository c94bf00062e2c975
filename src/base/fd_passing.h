// Descriptors over AF_UNIX stream sockets (SCM_RIGHTS), for every channel
// that hands them along with a message: the jail's init channel
// (jail/channel.h), a session turn's bridge (jail_turn.cc), the runner's
// bridge_socket frame (frame.h), the engine's session loop.
//
//   ssize_t n = SendWithFd(sock, bytes.data(), bytes.size(), fd);   // as sendmsg
//   std::vector<UniqueFd> got;
//   ssize_t m = ReceiveWithFds(sock, buf, sizeof buf, &got);        // as recvmsg
//
// The descriptors ride with the first byte sent; the reader gets them with
// the read that takes that byte. Both return what the system call returned
// (errno set on -1); neither retries on EINTR.
#ifndef AIRLOCK_BASE_FD_PASSING_H_
#define AIRLOCK_BASE_FD_PASSING_H_

#include <sys/socket.h>
#include <sys/types.h>

#include <cstddef>
#include <vector>

#include "base/unique_fd.h"

namespace airlock {

// The most descriptors one call sends or receives.
inline constexpr size_t kMaxPassedFds = 8;

// sendmsg of `size` bytes of `data` with `count` (at most kMaxPassedFds;
// 0: none) descriptors attached; `flags` as send's (MSG_NOSIGNAL by
// default: a closed peer is EPIPE, not SIGPIPE). EINVAL for too many.
ssize_t SendWithFds(int socket_fd, const char* data, size_t size, const int* fds, size_t count,
                    int flags = MSG_NOSIGNAL);
inline ssize_t SendWithFd(int socket_fd, const char* data, size_t size, int fd, int flags = MSG_NOSIGNAL) {
  return SendWithFds(socket_fd, data, size, &fd, 1, flags);
}

// recvmsg of up to `size` bytes into `data`; descriptors that came along
// are appended to `received`, close-on-exec (at most kMaxPassedFds per
// call: the kernel closes any beyond, and `truncated`, when given, says so).
ssize_t ReceiveWithFds(int socket_fd, char* data, size_t size, std::vector<UniqueFd>* received,
                       bool* truncated = nullptr);

}  // namespace airlock

#endif  // AIRLOCK_BASE_FD_PASSING_H_
