# Enforced: fill the work dir until the disk is full (ENOSPC), in 4 MiB files.
import errno
import os

buf = b"x" * (1 << 20)
total = 0
try:
    for i in range(256):
        fd = os.open("/work/fill-%d" % i, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        left = 4 * len(buf)
        while left > 0:
            n = os.write(fd, buf[: min(left, len(buf))])  # a short write is retried: the next one fails
            total += n
            left -= n
        os.close(fd)
    print("ALLOWED: wrote %d bytes without running out of space" % total)
except OSError as e:
    print("DENIED: %s after %d bytes" % (errno.errorcode.get(e.errno, e), total))
