// Allowed: plain computation.
#include <math.h>
#include <stdio.h>

int main(void) {
  unsigned long long s = 0;
  for (unsigned long long i = 0; i < 1000000; ++i) s += i;
  printf(s == 499999500000ULL && fabs(sqrt(2.0) - 1.41421356) < 1e-6 ? "OK: %llu\n" : "FAIL: %llu\n", s);
  return 0;
}
