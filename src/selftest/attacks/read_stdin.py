# Allowed: read all of stdin and echo it back.
import sys

data = sys.stdin.read()
print("got:", data)
print("OK: read %d bytes from stdin" % len(data))
