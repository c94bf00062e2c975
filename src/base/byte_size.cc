#include "base/byte_size.h"

#include <cstdio>

namespace airlock {
namespace {

struct Unit {
  uint64_t size;
  const char* name;
};
constexpr Unit kUnits[] = {{1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};

}  // namespace

std::string ExactBytes(uint64_t n) {
  for (const Unit& u : kUnits) {
    // Exact in three decimals: n * 1000 is a multiple of the unit (checked
    // without overflow: 1000 = 8 * 125 and each unit is a power of two >= 8).
    if (n < u.size || n % (u.size / 8) != 0) continue;
    const uint64_t whole = n / u.size;
    uint64_t thousandths = (n % u.size) / (u.size / 8) * 125;
    std::string s = std::to_string(whole);
    if (thousandths != 0) {
      std::string frac = std::to_string(thousandths);
      frac.insert(0, 3 - frac.size(), '0');
      while (frac.back() == '0') frac.pop_back();
      s += "." + frac;
    }
    return s + " " + u.name;
  }
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

std::string ApproxBytes(uint64_t n) {
  char buf[32];
  for (const Unit& u : kUnits) {
    if (n < u.size) continue;
    std::snprintf(buf, sizeof buf, "%.1f %s", static_cast<double>(n) / static_cast<double>(u.size), u.name);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  return buf;
}

}  // namespace airlock
