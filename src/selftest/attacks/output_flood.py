# Enforced: write to stdout forever; the output cap must end the run.
import sys

chunk = "A" * 65536
while True:
    sys.stdout.write(chunk)
