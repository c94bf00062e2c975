# Attack: make a new user namespace (unshare via ctypes), which would hand the
# program a full set of capabilities inside it.
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER = 0x10000000
if libc.unshare(CLONE_NEWUSER) == 0:
    print("ALLOWED: unshare(CLONE_NEWUSER) succeeded")
else:
    print("DENIED: unshare(CLONE_NEWUSER):", os.strerror(ctypes.get_errno()))
