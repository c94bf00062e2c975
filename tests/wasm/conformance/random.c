// random_get through getentropy and arc4random: bytes that vary between
// calls (and between runs: the driver runs this twice and compares).
#include <stdint.h>
#include <unistd.h>

#include "conformance.h"

int main(void) {
  unsigned char a[32], b[32];
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  CHECK("getentropy", getentropy(a, sizeof a) == 0 && getentropy(b, sizeof b) == 0);
  CHECK("getentropy.varies", memcmp(a, b, sizeof a) != 0);
  static const unsigned char zeros[32];
  CHECK("getentropy.nonzero", memcmp(a, zeros, sizeof a) != 0);
  static unsigned char m[257];
  CHECK("getentropy.max", getentropy(m, 256) == 0);
  CHECK_ERRNO("getentropy.too.long", getentropy(m, 257), EIO);

  uint32_t x = arc4random(), y = arc4random(), z = arc4random();
  CHECK("arc4random.varies", !(x == y && y == z));
  CHECK("arc4random_uniform", arc4random_uniform(10) < 10);

  // 64 KiB of random bytes use most byte values about equally.
  static unsigned char big[65536];
  arc4random_buf(big, sizeof big);
  unsigned counts[256] = {0};
  for (size_t i = 0; i < sizeof big; ++i) counts[big[i]]++;
  unsigned min = counts[0], max = counts[0];
  for (int i = 1; i < 256; ++i) {
    if (counts[i] < min) min = counts[i];
    if (counts[i] > max) max = counts[i];
  }
  CHECK("arc4random_buf.spread", min > 128 && max < 384);

  // Printed for the driver, which compares two runs.
  printf("sample ");
  for (size_t i = 0; i < 16; ++i) printf("%02x", a[i]);
  printf("\n");
  return 0;
}
