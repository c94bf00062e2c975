# Attack: read /etc/shadow.
import errno

try:
    with open("/etc/shadow") as f:
        print("ALLOWED: /etc/shadow:", f.readline().strip())
except OSError as e:
    print("DENIED: open(/etc/shadow):", errno.errorcode.get(e.errno, e))
