# Enforced: open files until the descriptor limit (EMFILE).
import errno
import os

fds = []
try:
    while len(fds) < 100000:
        fds.append(os.open("/dev/null", os.O_RDONLY))
    print("ALLOWED: 100000 files open without hitting a limit")
except OSError as e:
    print("DENIED: %s after %d open files" % (errno.errorcode.get(e.errno, e), len(fds)))
