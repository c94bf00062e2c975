# Attack: mount a tmpfs over /tmp, remount / read-write, bind-mount / (ctypes).
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
tries = [
    ("mount(tmpfs, /tmp)", b"none", b"/tmp", b"tmpfs", 0, b"size=1m"),
    ("mount(MS_REMOUNT, /)", None, b"/", None, MS_REMOUNT | MS_BIND, None),
    ("mount(MS_BIND, /, /tmp)", b"/", b"/tmp", None, MS_BIND | MS_REC, None),
]
allowed = []
for name, src, dst, fstype, flags, data in tries:
    if libc.mount(src, dst, fstype, ctypes.c_ulong(flags), data) == 0:
        allowed.append(name)
    else:
        print(name + ":", os.strerror(ctypes.get_errno()))
print("ALLOWED: " + ", ".join(allowed) if allowed else "DENIED: mount is not available")
