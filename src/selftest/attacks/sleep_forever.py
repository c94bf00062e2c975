# Enforced: sleep far past the deadline.
import time

time.sleep(1000)
