# Attack: userfaultfd via ctypes syscall() and /dev/userfaultfd.
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
allowed = []
for name, flags in [("userfaultfd()", os.O_CLOEXEC | os.O_NONBLOCK), ("userfaultfd(USER_MODE_ONLY)", os.O_CLOEXEC | 1)]:
    r = libc.syscall(ctypes.c_long(323), ctypes.c_long(flags))
    if r >= 0:
        allowed.append(name)
    else:
        print(name + ":", os.strerror(ctypes.get_errno()))
try:
    os.open("/dev/userfaultfd", os.O_RDWR)
    allowed.append("/dev/userfaultfd")
except OSError as e:
    print("/dev/userfaultfd:", e.strerror)
print("ALLOWED: " + ", ".join(allowed) if allowed else "DENIED: userfaultfd is not available")
