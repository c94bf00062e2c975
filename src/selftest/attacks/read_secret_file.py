# Attack: read the file the suite planted on the host (outside the jail),
# directly and through /proc/<pid>/root of the supervisor and of PID 1.
import errno

allowed = False
for path in ["@SECRET_PATH@", "/proc/@HOST_PID@/root@SECRET_PATH@", "/proc/1/root@SECRET_PATH@"]:
    try:
        with open(path, "rb") as f:
            data = f.read(4096)
        print("ALLOWED: read", len(data), "bytes from", path, ":", data.decode(errors="replace"))
        allowed = True
    except OSError as e:
        print(path + ":", errno.errorcode.get(e.errno, e))
if not allowed:
    print("DENIED: the secret file is not reachable")
