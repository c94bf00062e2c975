# Allowed: plain computation.
import math

s = sum(range(1000000))
print(("OK: %d" if s == 499999500000 and abs(math.sqrt(2) - 1.41421356) < 1e-6 else "FAIL: %d") % s)
