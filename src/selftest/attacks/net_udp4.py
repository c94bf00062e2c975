# Attack: UDP datagram to 127.0.0.1:@UDP_PORT@, where the suite receives on the host.
import errno
import socket

try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
except OSError as e:
    print("DENIED: socket(AF_INET, SOCK_DGRAM):", errno.errorcode.get(e.errno, e))
else:
    try:
        s.sendto(b"escape", ("127.0.0.1", @UDP_PORT@))
        print("ALLOWED: sent a datagram to 127.0.0.1:@UDP_PORT@")
    except OSError as e:
        print("DENIED: sendto(127.0.0.1:@UDP_PORT@):", errno.errorcode.get(e.errno, e))
