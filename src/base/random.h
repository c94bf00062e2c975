// Randomness from the kernel (getrandom), for identifiers that must be
// unguessable: session ids, per-turn nonces, key secrets.
#ifndef AIRLOCK_BASE_RANDOM_H_
#define AIRLOCK_BASE_RANDOM_H_

#include <cstddef>
#include <string>

#include "base/status.h"

namespace airlock {

// `n` bytes from getrandom(2); an error only if the kernel refuses.
StatusOr<std::string> RandomBytes(size_t n);

// `n` random bytes as 2n lowercase hex digits.
StatusOr<std::string> RandomHex(size_t n);

}  // namespace airlock

#endif  // AIRLOCK_BASE_RANDOM_H_
