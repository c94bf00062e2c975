# Allowed: an uncaught exception comes back as a result with the traceback.
print("before")
print(1 / 0)
