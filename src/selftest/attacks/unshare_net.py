# Attack: make a new network namespace, alone and together with a new user
# namespace (which would grant CAP_NET_ADMIN over it).
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
allowed = []
for name, flags in [("CLONE_NEWNET", CLONE_NEWNET), ("CLONE_NEWUSER|CLONE_NEWNET", CLONE_NEWUSER | CLONE_NEWNET)]:
    if libc.unshare(flags) == 0:
        allowed.append(name)
    else:
        print("unshare(%s): %s" % (name, os.strerror(ctypes.get_errno())))
print("ALLOWED: unshare(" + ", ".join(allowed) + ")" if allowed else "DENIED: no new network namespace")
