# Attack: TCP connection to 127.0.0.1:@TCP_PORT@, where the suite listens on the host.
import errno
import socket

try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
except OSError as e:
    print("DENIED: socket(AF_INET, SOCK_STREAM):", errno.errorcode.get(e.errno, e))
else:
    try:
        s.settimeout(3)
        s.connect(("127.0.0.1", @TCP_PORT@))
        print("ALLOWED: connected to 127.0.0.1:@TCP_PORT@")
    except OSError as e:
        print("DENIED: connect(127.0.0.1:@TCP_PORT@):", errno.errorcode.get(e.errno, e))
