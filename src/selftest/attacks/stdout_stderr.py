# Allowed: write to both streams.
import sys

print("to-stderr", file=sys.stderr)
print("to-stdout")
print("OK: wrote both streams")
