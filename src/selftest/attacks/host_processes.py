# Attack: see and signal host processes. Only the jail's own processes
# (PID 1 = airlock-init, this program) may be visible, and the supervisor
# (host pid @HOST_PID@) must not be signalable.
import errno
import os

pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("visible pids:", pids)
foreign = [p for p in pids if p not in (1, os.getpid(), os.getppid())]
try:
    # In a container the supervisor's pid is small and this program may have
    # the same number in the jail's own PID namespace: signalling it then
    # reaches this program, not the supervisor.
    if os.getpid() == @HOST_PID@:
        raise ProcessLookupError(errno.ESRCH, "this program's own pid")
    os.kill(@HOST_PID@, 0)
    print("ALLOWED: kill(@HOST_PID@, 0) succeeded")
except OSError as e:
    if foreign:
        print("ALLOWED: processes outside this program are visible:", foreign)
    else:
        print("DENIED: only", len(pids), "jail processes visible; kill(@HOST_PID@, 0):",
              errno.errorcode.get(e.errno, e))
