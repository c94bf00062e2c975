// HostBait: what the containment suite plants on the host for attackers to
// go after, and the host-side checks that nothing reached it.
//
//   - a secret file in a fresh 0755 directory under /tmp, mode 0644, so only
//     the jail's mount namespace keeps it out of reach;
//   - an environment variable of this process holding the same secret value;
//   - an abstract AF_UNIX socket, a TCP listener (127.0.0.1 and ::1, same
//     port) and a UDP socket (127.0.0.1), all in the host network namespace;
//   - a unique marker string (used in file names and daemon command lines).
// Attack sources reach these through placeholders (see Substitute()); the
// secret value itself is never handed to a program: the suite checks that it
// never shows up in any output.
//
// Destruction removes the file and directory, unsets the variable and closes
// the sockets. Only one HostBait should exist per process at a time (it sets
// an environment variable).
#ifndef AIRLOCK_SELFTEST_HOST_BAIT_H_
#define AIRLOCK_SELFTEST_HOST_BAIT_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace airlock::selftest {

class HostBait {
 public:
  static StatusOr<std::unique_ptr<HostBait>> Create();
  ~HostBait();
  HostBait(const HostBait&) = delete;
  HostBait& operator=(const HostBait&) = delete;

  // Replaces @SECRET_PATH@, @HOST_PID@, @ABSTRACT_SOCKET@ (name without the
  // leading NUL), @SECRET_ENV_NAME@, @TCP_PORT@, @UDP_PORT@ and @MARKER@.
  std::string Substitute(std::string_view source) const;

  const std::string& secret_value() const { return secret_value_; }
  const std::string& secret_path() const { return secret_path_; }
  const std::string& secret_env_name() const { return env_name_; }
  const std::string& marker() const { return marker_; }

  // Every contact that reached a host listener since the last call (accepted
  // connections, received datagrams), described; drains them.
  std::vector<std::string> DrainContacts();

  // Problems with the planted secret: changed content or mode, extra files
  // in its directory. Empty when intact.
  std::vector<std::string> CheckSecretIntact() const;

  // Host paths an attack tried to create outside the work dir
  // (/usr/<marker>, /etc/<marker>, /<marker>, /<marker>.up) that exist.
  std::vector<std::string> FilesCreatedOutside() const;

 private:
  HostBait() = default;
  std::string dir_;
  std::string secret_path_;
  std::string secret_value_;
  std::string env_name_;
  std::string marker_;
  std::string abstract_name_;
  UniqueFd unix_listener_;
  UniqueFd tcp4_listener_;
  UniqueFd tcp6_listener_;
  UniqueFd udp_socket_;
  int tcp_port_ = 0;
  int udp_port_ = 0;
};

}  // namespace airlock::selftest

#endif  // AIRLOCK_SELFTEST_HOST_BAIT_H_
