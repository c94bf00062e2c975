# Attack: list the host's /root.
import errno
import os

try:
    entries = os.listdir("/root")
    print("\n".join(entries))
    if entries:
        print("ALLOWED: /root lists", len(entries), "entries")
    else:
        print("DENIED: /root is an empty directory in the jail")
except OSError as e:
    print("DENIED: listdir(/root):", errno.errorcode.get(e.errno, e))
