# Attack: read the environment of the jail's PID 1 (/proc/1/environ); it must
# not carry anything from the supervisor (e.g. @SECRET_ENV_NAME@).
import errno

try:
    with open("/proc/1/environ", "rb") as f:
        data = f.read()
    print(data.replace(b"\0", b"\n").decode(errors="replace"))
    if b"@SECRET_ENV_NAME@" in data:
        print("ALLOWED: PID 1 has @SECRET_ENV_NAME@ in its environment")
    else:
        print("DENIED: PID 1's environment (%d bytes) has nothing from the supervisor" % len(data))
except OSError as e:
    print("DENIED: /proc/1/environ:", errno.errorcode.get(e.errno, e))
