# Enforced: fork until the jail's process limit stops us; children stay alive
# (sleeping) so the count is real. More than 1000 processes means no limit.
import errno
import os
import signal

for n in range(1000):
    try:
        pid = os.fork()
    except OSError as e:
        print("DENIED: fork failed after %d children: %s" % (n, errno.errorcode.get(e.errno, e)), flush=True)
        os._exit(0)
    if pid == 0:
        while True:
            signal.pause()
print("ALLOWED: 1000 processes created without hitting a limit", flush=True)
