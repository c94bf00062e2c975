# Attack: reach a global IPv6 address (2001:db8::1, UDP port 53): a route
# out of the jail would let connect() succeed and the datagram leave.
import errno
import socket

try:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
except OSError as e:
    print("DENIED: socket(AF_INET6, SOCK_DGRAM):", errno.errorcode.get(e.errno, e))
else:
    try:
        s.connect(("2001:db8::1", 53))
        s.send(b"escape")
        print("ALLOWED: sent a datagram to [2001:db8::1]:53")
    except OSError as e:
        print("DENIED: [2001:db8::1]:53:", errno.errorcode.get(e.errno, e))
