# Attack: resolve example.com (needs a resolver reachable from the jail).
import socket

try:
    addrs = socket.getaddrinfo("example.com", 80)
    print("ALLOWED: example.com resolved to", addrs[0][4][0])
except OSError as e:
    print("DENIED: getaddrinfo(example.com):", e)
