# Attack: connect to the abstract AF_UNIX socket "@ABSTRACT_SOCKET@" that the
# suite listens on in the host's network namespace.
import errno
import socket

try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect("\0@ABSTRACT_SOCKET@")
    print("ALLOWED: connected to the host abstract socket @@ABSTRACT_SOCKET@")
except OSError as e:
    print("DENIED: connect(@@ABSTRACT_SOCKET@):", errno.errorcode.get(e.errno, e))
