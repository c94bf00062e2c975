# Attack: gain privileges by executing setuid-root binaries (su, passwd, ...).
# Each is started with a stdin that never delivers input, stopped (or left a
# zombie) right after its execve() completed, and its credentials are read from /proc: gained
# capabilities or an effective uid different from ours mean it worked.
import os
import signal
import stat
import subprocess

allowed, tried = [], 0
for path in ["/usr/bin/su", "/usr/bin/passwd", "/usr/bin/chsh", "/usr/bin/chfn",
             "/usr/bin/gpasswd", "/usr/bin/newgrp", "/usr/bin/mount", "/usr/bin/sudo"]:
    try:
        if not os.stat(path).st_mode & stat.S_ISUID:
            continue
    except OSError:
        continue
    p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.kill(p.pid, signal.SIGSTOP)  # takes effect once execve() completed
    os.waitid(os.P_PID, p.pid, os.WSTOPPED | os.WEXITED | os.WNOWAIT)
    tried += 1
    try:
        with open("/proc/%d/status" % p.pid) as f:
            fields = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
        uids = [int(x) for x in fields["Uid"].split()]
        cap_eff, cap_prm = int(fields["CapEff"], 16), int(fields["CapPrm"], 16)
        print(path, fields["Name"].strip(), "Uid", uids, "CapEff %x CapPrm %x" % (cap_eff, cap_prm))
        if uids[1] == 0 or uids[1] != os.getuid() or uids[2] != os.getuid() or cap_eff or cap_prm:
            allowed.append(path)
    except OSError as e:
        print(path + ": status unreadable (credentials changed?):", e)
        allowed.append(path)
    os.kill(p.pid, signal.SIGKILL)
    os.kill(p.pid, signal.SIGCONT)
    p.wait()
if allowed:
    print("ALLOWED: raised privileges via", ", ".join(allowed))
elif tried:
    print("DENIED: %d setuid binaries ran without privileges" % tried)
else:
    print("DENIED: no setuid binary is visible in the jail")
