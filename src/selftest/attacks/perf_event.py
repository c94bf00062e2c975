# Attack: perf_event_open via ctypes syscall() on our own task (software clock,
# user space only: allowed for unprivileged users on most hosts).
import ctypes
import os
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK = 1, 0
flags = 1 | (1 << 5) | (1 << 6)  # disabled, exclude_kernel, exclude_hv
attr = ctypes.create_string_buffer(struct.pack("IIQQQQQ", PERF_TYPE_SOFTWARE, 64, PERF_COUNT_SW_CPU_CLOCK, 0, 0, 0, flags), 64)
r = libc.syscall(ctypes.c_long(298), attr, ctypes.c_long(0), ctypes.c_long(-1), ctypes.c_long(-1), ctypes.c_long(0))
if r >= 0:
    print("ALLOWED: perf_event_open -> fd", r)
else:
    print("DENIED: perf_event_open:", os.strerror(ctypes.get_errno()))
