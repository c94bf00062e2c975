#include "base/cancel.h"

#include <sys/eventfd.h>

#include <cstdint>

namespace airlock {

CancelToken::CancelToken() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void CancelToken::Cancel() {
  if (cancelled_.exchange(true)) return;
  if (fd_.valid()) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(fd_.get(), &one, sizeof one);
  }
}

}  // namespace airlock
