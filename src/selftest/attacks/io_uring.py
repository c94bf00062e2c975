# Attack: io_uring_setup via ctypes syscall() (io_uring ops bypass seccomp).
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
params = ctypes.create_string_buffer(120)
r = libc.syscall(ctypes.c_long(425), ctypes.c_long(4), params)
if r >= 0:
    print("ALLOWED: io_uring_setup -> fd", r)
else:
    print("DENIED: io_uring_setup:", os.strerror(ctypes.get_errno()))
