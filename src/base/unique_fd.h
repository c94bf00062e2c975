// Move-only owners of kernel handles: file descriptors and child processes.
//
// UniqueFd closes its descriptor when destroyed. It is the only way airlock
// holds an fd beyond a single function. Release() hands ownership out.
#ifndef AIRLOCK_BASE_UNIQUE_FD_H_
#define AIRLOCK_BASE_UNIQUE_FD_H_

#include <unistd.h>

#include <utility>

namespace airlock {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }

  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives up ownership without closing.
  int Release() { return std::exchange(fd_, -1); }

  // Closes the current fd (if any) and takes `fd`.
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace airlock

#endif  // AIRLOCK_BASE_UNIQUE_FD_H_
