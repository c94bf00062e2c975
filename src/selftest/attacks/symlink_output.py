# Enforced: ask for output files that are symlinks to host files (and a
# directory symlink); the collector must not follow them. normal.txt must
# still be collected.
import os

with open("normal.txt", "w") as f:
    f.write("hello\n")
os.symlink("/etc/passwd", "out.txt")
os.symlink("@SECRET_PATH@", "secret_link.txt")
os.symlink("/etc", "linkdir")
os.symlink("/proc/self/environ", "environ.txt")
print("STARTED: symlinks in place")
