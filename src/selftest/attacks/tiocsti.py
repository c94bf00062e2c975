# Attack: TIOCSTI (push input into a terminal) on fd 0 and on /dev/tty.
import fcntl
import os
import termios

allowed = []
fds = [(0, "fd 0")]
try:
    fds.append((os.open("/dev/tty", os.O_RDWR), "/dev/tty"))
except OSError as e:
    print("/dev/tty:", e.strerror)
for fd, what in fds:
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x")
        allowed.append(what)
    except OSError as e:
        print("TIOCSTI on %s: %s" % (what, e.strerror))
print("ALLOWED: TIOCSTI on " + ", ".join(allowed) if allowed else "DENIED: TIOCSTI is not available")
