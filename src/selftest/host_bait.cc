#include "selftest/host_bait.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace airlock::selftest {
namespace {

constexpr char kSecretFileName[] = "secret.txt";

StatusOr<std::string> RandomHex(size_t bytes) {
  UniqueFd fd(open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!fd) return ErrnoError("open /dev/urandom");
  std::string raw(bytes, '\0');
  if (read(fd.get(), raw.data(), bytes) != static_cast<ssize_t>(bytes)) return ErrnoError("read /dev/urandom");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ReplaceAll(std::string& s, std::string_view from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

// A non-blocking listening/bound socket on the loopback address of `family`;
// `port` 0 picks one (returned through `port`).
StatusOr<UniqueFd> BindLoopback(int family, int type, int* port) {
  UniqueFd fd(socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return ErrnoError("socket");
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(*port));
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof *a;
  } else {
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(*port));
    a->sin6_addr = in6addr_loopback;
    len = sizeof *a;
  }
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return ErrnoError("bind");
  if (type == SOCK_STREAM && listen(fd.get(), 16) != 0) return ErrnoError("listen");
  len = sizeof ss;
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  *port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                  : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return fd;
}

}  // namespace

StatusOr<std::unique_ptr<HostBait>> HostBait::Create() {
  std::unique_ptr<HostBait> b(new HostBait());
  AIRLOCK_ASSIGN_OR_RETURN(std::string token, RandomHex(8));
  AIRLOCK_ASSIGN_OR_RETURN(std::string secret, RandomHex(16));
  b->marker_ = "airlock-selftest-" + token;
  b->secret_value_ = "AIRLOCK-SECRET-" + secret;
  b->env_name_ = "AIRLOCK_SELFTEST_SECRET_" + token;
  b->abstract_name_ = b->marker_ + ".sock";

  char dir_template[] = "/tmp/airlock-selftest-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return ErrnoError("mkdtemp");
  b->dir_ = dir_template;
  if (chmod(b->dir_.c_str(), 0755) != 0) return ErrnoError("chmod " + b->dir_);
  b->secret_path_ = b->dir_ + "/" + kSecretFileName;
  {
    UniqueFd fd(open(b->secret_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd) return ErrnoError("create " + b->secret_path_);
    if (write(fd.get(), b->secret_value_.data(), b->secret_value_.size()) !=
        static_cast<ssize_t>(b->secret_value_.size()))
      return ErrnoError("write " + b->secret_path_);
    fchmod(fd.get(), 0644);
  }
  if (setenv(b->env_name_.c_str(), b->secret_value_.c_str(), 1) != 0) return ErrnoError("setenv");

  b->unix_listener_.Reset(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!b->unix_listener_) return ErrnoError("socket(AF_UNIX)");
  sockaddr_un ua{};
  ua.sun_family = AF_UNIX;
  memcpy(ua.sun_path + 1, b->abstract_name_.data(), b->abstract_name_.size());
  const socklen_t ua_len = offsetof(sockaddr_un, sun_path) + 1 + b->abstract_name_.size();
  if (bind(b->unix_listener_.get(), reinterpret_cast<sockaddr*>(&ua), ua_len) != 0)
    return ErrnoError("bind abstract socket");
  if (listen(b->unix_listener_.get(), 16) != 0) return ErrnoError("listen abstract socket");

  AIRLOCK_ASSIGN_OR_RETURN(b->tcp4_listener_, BindLoopback(AF_INET, SOCK_STREAM, &b->tcp_port_));
  int port6 = b->tcp_port_;
  StatusOr<UniqueFd> tcp6 = BindLoopback(AF_INET6, SOCK_STREAM, &port6);
  if (tcp6.ok()) b->tcp6_listener_ = std::move(tcp6).value();  // a host without IPv6 is fine
  AIRLOCK_ASSIGN_OR_RETURN(b->udp_socket_, BindLoopback(AF_INET, SOCK_DGRAM, &b->udp_port_));
  return b;
}

HostBait::~HostBait() {
  if (!env_name_.empty()) unsetenv(env_name_.c_str());
  if (!secret_path_.empty()) unlink(secret_path_.c_str());
  if (!dir_.empty()) rmdir(dir_.c_str());
}

std::string HostBait::Substitute(std::string_view source) const {
  std::string s(source);
  ReplaceAll(s, "@SECRET_PATH@", secret_path_);
  ReplaceAll(s, "@HOST_PID@", std::to_string(getpid()));
  ReplaceAll(s, "@ABSTRACT_SOCKET@", abstract_name_);
  ReplaceAll(s, "@SECRET_ENV_NAME@", env_name_);
  ReplaceAll(s, "@TCP_PORT@", std::to_string(tcp_port_));
  ReplaceAll(s, "@UDP_PORT@", std::to_string(udp_port_));
  ReplaceAll(s, "@MARKER@", marker_);
  return s;
}

std::vector<std::string> HostBait::DrainContacts() {
  std::vector<std::string> out;
  const std::pair<const UniqueFd*, const char*> listeners[] = {
      {&unix_listener_, "abstract unix socket"}, {&tcp4_listener_, "TCP 127.0.0.1"}, {&tcp6_listener_, "TCP [::1]"}};
  for (const auto& [fd, what] : listeners) {
    if (!fd->valid()) continue;
    for (;;) {
      UniqueFd conn(accept4(fd->get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn) break;
      out.push_back(std::string("a connection reached the host's ") + what + " listener");
    }
  }
  char buf[256];
  while (recv(udp_socket_.get(), buf, sizeof buf, MSG_DONTWAIT) >= 0)
    out.push_back("a datagram reached the host's UDP 127.0.0.1 socket");
  return out;
}

std::vector<std::string> HostBait::CheckSecretIntact() const {
  std::vector<std::string> problems;
  struct stat st{};
  if (lstat(secret_path_.c_str(), &st) != 0) {
    problems.push_back("the planted secret " + secret_path_ + " is gone");
    return problems;
  }
  if (!S_ISREG(st.st_mode) || (st.st_mode & 07777) != 0644)
    problems.push_back("the planted secret's mode changed");
  if (ReadWholeFile(secret_path_) != secret_value_) problems.push_back("the planted secret's content changed");
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec))
    if (e.path().filename() != kSecretFileName)
      problems.push_back("unexpected file next to the planted secret: " + e.path().string());
  return problems;
}

std::vector<std::string> HostBait::FilesCreatedOutside() const {
  std::vector<std::string> found;
  for (const std::string& p : {"/usr/" + marker_, "/etc/" + marker_, "/" + marker_, "/" + marker_ + ".up"}) {
    struct stat st{};
    if (lstat(p.c_str(), &st) == 0) found.push_back(p);
  }
  return found;
}

}  // namespace airlock::selftest
