// Allowed: plain computation (C++20).
#include <iostream>
#include <numeric>
#include <vector>

int main() {
  std::vector<long long> v(1000000);
  std::iota(v.begin(), v.end(), 0LL);
  const long long s = std::accumulate(v.begin(), v.end(), 0LL);
  std::cout << (s == 499999500000LL ? "OK: " : "FAIL: ") << s << "\n";
}
