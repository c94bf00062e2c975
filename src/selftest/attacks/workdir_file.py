# Allowed: write a file in the work dir (and /tmp) and read it back.
with open("/work/data.txt", "w") as f:
    f.write("round trip")
with open("/tmp/scratch.txt", "w") as f:
    f.write("tmp")
ok = open("data.txt").read() == "round trip" and open("/tmp/scratch.txt").read() == "tmp"
print(("OK: " if ok else "FAIL: ") + "round trip")
