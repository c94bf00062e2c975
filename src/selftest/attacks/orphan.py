# Enforced: leave a daemon behind. A double-forked, setsid()'d shell that
# sleeps forever (its command line carries the marker @MARKER@); we wait until
# it runs, then exit. After the run no process with the marker may exist.
import os
import time

r, w = os.pipe2(os.O_CLOEXEC)
child = os.fork()
if child == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execv("/bin/sh", ["sh", "-c", "sleep 1000; : @MARKER@"])
    os._exit(0)
os.close(w)
os.read(r, 1)  # EOF once the grandchild exec'd (or died)
os.waitpid(child, 0)
time.sleep(0.1)
print("STARTED: daemon left behind")
