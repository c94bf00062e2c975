# Attack: kernel keyrings via ctypes syscall() (not namespaced: a channel between runs).
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_add_key, SYS_keyctl = 248, 250
allowed = []
r = libc.syscall(ctypes.c_long(SYS_add_key), b"user", b"airlock-selftest", b"x", ctypes.c_long(1), ctypes.c_long(-2))
if r >= 0:
    allowed.append("add_key")
else:
    print("add_key:", os.strerror(ctypes.get_errno()))
r = libc.syscall(ctypes.c_long(SYS_keyctl), ctypes.c_long(0), ctypes.c_long(-4), ctypes.c_long(1))
if r >= 0:
    allowed.append("keyctl(GET_KEYRING_ID)")
else:
    print("keyctl:", os.strerror(ctypes.get_errno()))
print("ALLOWED: " + ", ".join(allowed) if allowed else "DENIED: keyrings are not available")
