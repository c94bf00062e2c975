// Descriptors over AF_UNIX stream sockets (SCM_RIGHTS), for the channels
// that hand one along with a message: a session turn's bridge (jail_turn.cc),
// the runner's bridge_socket frame (frame.h), the engine's session loop.
//
//   ssize_t n = SendWithFd(sock, bytes.data(), bytes.size(), fd);   // as sendmsg
//   std::vector<UniqueFd> got;
//   ssize_t m = ReceiveWithFds(sock, buf, sizeof buf, &got);        // as recvmsg
//
// The descriptor rides with the first byte sent; the reader gets it with
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

// sendmsg of `size` bytes of `data` with `fd` attached; `flags` as send's
// (MSG_NOSIGNAL by default: a closed peer is EPIPE, not SIGPIPE).
ssize_t SendWithFd(int socket_fd, const char* data, size_t size, int fd, int flags = MSG_NOSIGNAL);

// recvmsg of up to `size` bytes into `data`; descriptors that came along
// are appended to `received`, close-on-exec (at most 4 per call; the
// kernel closes any beyond).
ssize_t ReceiveWithFds(int socket_fd, char* data, size_t size, std::vector<UniqueFd>* received);

}  // namespace airlock

#endif  // AIRLOCK_BASE_FD_PASSING_H_
