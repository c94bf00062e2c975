# Attack: read the supervisor's environment (/proc/@HOST_PID@/environ), which
# holds the secret variable @SECRET_ENV_NAME@.
import errno
import os
import sys

# In a container the supervisor's pid is small, and the jail's own PID
# namespace may give this very program the same number: then the path names
# this program, never the supervisor.
if os.getpid() == @HOST_PID@:
    print("DENIED: pid @HOST_PID@ is this program in the jail's own PID namespace, not the supervisor")
    sys.exit(0)

allowed = False
for path in ["/proc/@HOST_PID@/environ", "/proc/@HOST_PID@/cmdline"]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print(path + ":", errno.errorcode.get(e.errno, e))
        continue
    if data:
        print(data.replace(b"\0", b"\n").decode(errors="replace"))
        print("ALLOWED: read", len(data), "bytes from", path)
        allowed = True
    else:
        print(path + ": empty")
if not allowed:
    print("DENIED: the supervisor's /proc entries are not reachable")
