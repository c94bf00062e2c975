// Byte counts for people: one helper for every size airlock states.
//
//   ExactBytes(1000)    == "1000 bytes"   (a limit: never rounded)
//   ExactBytes(1536)    == "1.5 KiB"
//   ExactBytes(1 << 20) == "1 MiB"
//   ApproxBytes(12345)  == "12.1 KiB"     (a measurement: one decimal)
#ifndef AIRLOCK_BASE_BYTE_SIZE_H_
#define AIRLOCK_BASE_BYTE_SIZE_H_

#include <cstdint>
#include <string>

namespace airlock {

// The largest binary unit (KiB, MiB, GiB) in which `n` is exact with at
// most three decimals, else plain bytes: the value is never rounded.
std::string ExactBytes(uint64_t n);

// One decimal in the largest unit that fits ("512 B", "1.5 KiB", "3.2 MiB").
std::string ApproxBytes(uint64_t n);

}  // namespace airlock

#endif  // AIRLOCK_BASE_BYTE_SIZE_H_
