# Attack: bpf() via ctypes syscall() — create an array map.
import ctypes
import os
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_bpf, BPF_MAP_CREATE, BPF_MAP_TYPE_ARRAY = 321, 0, 2
attr = ctypes.create_string_buffer(struct.pack("IIII", BPF_MAP_TYPE_ARRAY, 4, 4, 1), 128)
r = libc.syscall(ctypes.c_long(SYS_bpf), ctypes.c_long(BPF_MAP_CREATE), attr, ctypes.c_long(128))
if r >= 0:
    print("ALLOWED: BPF_MAP_CREATE -> fd", r)
else:
    print("DENIED: bpf(BPF_MAP_CREATE):", os.strerror(ctypes.get_errno()))
