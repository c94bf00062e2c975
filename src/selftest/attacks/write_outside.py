# Attack: create files outside the work dir (and overwrite the planted secret).
import errno

allowed = False
for path in ["/usr/@MARKER@", "/etc/@MARKER@", "/@MARKER@", "/work/../@MARKER@.up", "@SECRET_PATH@"]:
    try:
        with open(path, "w") as f:
            f.write("pwned\n")
        print("ALLOWED: created", path)
        allowed = True
    except OSError as e:
        print(path + ":", errno.errorcode.get(e.errno, e))
if not allowed:
    print("DENIED: nothing outside the work dir is writable")
