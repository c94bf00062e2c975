# Enforced: allocate and touch memory until the memory limit kills us.
chunks = []
while len(chunks) < 1024:
    chunks.append(b"\x01" * (8 << 20))
print("ALLOWED: 8 GiB allocated")
