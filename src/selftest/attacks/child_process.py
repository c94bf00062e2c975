# Allowed: spawn a child process.
import subprocess

r = subprocess.run(["echo", "hi-from-child"], capture_output=True, text=True)
print(r.stdout.strip())
print(("OK: " if r.returncode == 0 and r.stdout == "hi-from-child\n" else "FAIL: ") + "child exited %d" % r.returncode)
