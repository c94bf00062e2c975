# Attack: ptrace via ctypes — PTRACE_TRACEME, attach to the parent (the
# jail's init), and attach to a child of our own (same uid).
import ctypes
import os
import signal

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_TRACEME, PTRACE_ATTACH = 0, 16

def err():
    return os.strerror(ctypes.get_errno())

allowed = []
child = os.fork()  # PTRACE_TRACEME in a child: a traced process stops on every signal
if child == 0:
    os._exit(0 if libc.ptrace(PTRACE_TRACEME, 0, None, None) == 0 else 1)
if os.waitpid(child, 0)[1] == 0:
    allowed.append("PTRACE_TRACEME")
else:
    print("PTRACE_TRACEME: failed")
ppid = os.getppid()
if libc.ptrace(PTRACE_ATTACH, ppid, None, None) == 0:
    allowed.append("attach to parent %d" % ppid)
else:
    print("PTRACE_ATTACH(parent):", err())
victim = os.fork()
if victim == 0:
    while True:
        signal.pause()
if libc.ptrace(PTRACE_ATTACH, victim, None, None) == 0:
    allowed.append("attach to own child")
else:
    print("PTRACE_ATTACH(child):", err())
os.kill(victim, signal.SIGKILL)
os.waitpid(victim, 0)
print("ALLOWED: " + ", ".join(allowed) if allowed else "DENIED: ptrace is not available")
