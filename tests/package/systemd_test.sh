#!/usr/bin/env bash
# The Debian package under a real systemd (issue: "dpkg -i airlock_*.deb &&
# systemctl start airlock gives a working server, curl /metrics shows the
# runs an SDK client just made"). CI machines have no systemd as PID 1, so
# this boots the host's own /lib/systemd/systemd as PID 1 of fresh pid,
# mount, cgroup, net, uts and ipc namespaces, on a throwaway overlay of the
# host's root filesystem: dpkg -i, systemctl and the journal all act on the
# overlay, never on the host. Then, inside it:
#   dpkg -i, systemctl start airlock, systemctl status, an MCP SDK client run
#   over http://127.0.0.1:8787/mcp, curl /metrics (airlock_runs_total moved),
#   systemctl reload (SIGHUP, in the journal), systemctl stop (drain, "stopped
#   cleanly", exit 0), dpkg --purge (nothing left).
# Finally the namespace's systemd is powered off (killed if it hangs), its
# cgroups removed; nothing stays on the host.
#   tests/package/systemd_test.sh [BUILD_DIR]
# Exit 0 passed, 77 skipped (no root, no systemd binary, no overlayfs or
# cgroup layout systemd can boot on), anything else failed. Never builds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$here/build}"
skip() { echo "systemd_test: $*; skipped" >&2; exit 77; }

# --- What the mechanism needs -------------------------------------------------
[ "$(id -u)" = 0 ] || skip "needs root"
[ -x /lib/systemd/systemd ] || skip "no /lib/systemd/systemd"
for c in unshare nsenter pivot_root dpkg node; do command -v "$c" >/dev/null || skip "no $c"; done
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || skip "no overlayfs"
grep -qw overlay /proc/filesystems || skip "no overlayfs"
deb="$(ls "$build"/airlock_*_amd64.deb 2>/dev/null | head -1)"
[ -n "$deb" ] || skip "no $build/airlock_*_amd64.deb (build it: cmake --build build --target package)"
[ -d "$here/tests/e2e/node_modules/@modelcontextprotocol/sdk" ] || skip "no MCP SDK in tests/e2e/node_modules"
# systemd 252 boots on cgroup v2 (/sys/fs/cgroup is cgroup2) or on the
# legacy/hybrid layout (a tmpfs with a name=systemd v1 hierarchy); the
# namespace gets fresh mounts of the same hierarchies the host has.
cgfs="$(stat -f -c %T /sys/fs/cgroup)"
if [ "$cgfs" != cgroup2fs ] && ! [ "$(stat -f -c %T /sys/fs/cgroup/systemd 2>/dev/null)" = cgroupfs ]; then
  skip "/sys/fs/cgroup is neither cgroup v2 nor a v1 layout with a name=systemd hierarchy"
fi
if dpkg-query -W -f='${Status}' airlock 2>/dev/null | grep -q "ok installed"; then
  echo "systemd_test: airlock is installed on the host; this test installs it only in its overlay" >&2
fi

work="$(mktemp -d /tmp/airlock-systemd.XXXXXX)"
cgname="airlock-systemd-test-$$"
pidfile="$work/pid"         # host pid of the namespace's PID 1 (systemd)
bootlog="$work/boot.log"    # systemd's own stdout/stderr
unshare_pid=""
cgdirs=()                   # the host cgroups made for the namespace

# --- Teardown: power the namespace off, kill it if it hangs, remove its cgroups.
cleanup() {
  set +e
  local sd; sd="$(cat "$pidfile" 2>/dev/null)"
  if [ -n "$sd" ] && kill -0 "$sd" 2>/dev/null; then
    kill -RTMIN+4 "$sd"     # systemd: SIGRTMIN+4 = poweroff
    for _ in $(seq 1 60); do kill -0 "$sd" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$sd" 2>/dev/null && { echo "systemd_test: poweroff hung; SIGKILL to $sd" >&2; kill -KILL "$sd"; }
  fi
  # PID 1's death kills every process of the pid namespace; the mount
  # namespace (overlay, tmpfs) goes with its last process.
  [ -n "$unshare_pid" ] && wait "$unshare_pid" 2>/dev/null
  local d
  for d in "${cgdirs[@]}"; do
    # deepest first: systemd's slices and scopes under our cgroup
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
    [ -d "$d" ] && echo "systemd_test: could not remove cgroup $d" >&2
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap "exit 130" INT TERM

# --- A cgroup of its own in every hierarchy; the cgroup namespace makes it the
# namespace's root, where systemd puts init.scope, system.slice, ...
while IFS=: read -r _ ctrl path; do
  case "$ctrl" in
    "") mnt="$(findmnt -rn -t cgroup2 -o TARGET | head -1)" ;;          # the v2 hierarchy
    *) mnt="$(findmnt -rn -t cgroup -o TARGET,OPTIONS | awk -v c="$ctrl" '
          { n=split($2, o, ","); for (i=1;i<=n;i++) if (o[i]==c || "name="o[i]==c) print $1 }' | head -1)" ;;
  esac
  [ -n "$mnt" ] || continue
  d="$mnt${path%/}/$cgname"
  mkdir "$d"
  cgdirs+=("$d")
  # a v1 cpuset takes no process before it has cpus and mems (ENOSPC)
  for f in cpuset.cpus cpuset.mems; do
    [ -f "$d/$f" ] && cat "$(dirname "$d")/$f" > "$d/$f"
  done
done < /proc/self/cgroup

# --- Stage 2, run as PID 1 of the new namespaces: build the root, exec systemd.
# The shell itself goes into the new cgroups first (a cgroup namespace is
# rooted where its creator is).
cat > "$work/boot.sh" <<'BOOT'
set -euo pipefail
R="$1"
# A tmpfs for the overlay's upper layer; the lower layer is the host's root
# filesystem (its submounts are not part of it, we mount our own below).
mount -t tmpfs -o mode=0755 tmpfs "$R"
mkdir "$R/upper" "$R/work" "$R/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$R/upper,workdir=$R/work" "$R/root"
N="$R/root"
# The checkout and the build directory at their own paths: the overlay holds
# the root filesystem only, not what is mounted on it (a tmpfs /tmp, say,
# where CI's clone lives).
for d in "$2" "$3"; do
  [ -d "$d" ] || continue
  mkdir -p "$N$d"
  mount --bind "$d" "$N$d"
done
mount -t proc -o nosuid,nodev,noexec proc "$N/proc"
mount -t sysfs -o nosuid,nodev,noexec sysfs "$N/sys"
# cgroups: fresh mounts, seen from inside the cgroup namespace (root = ours).
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
  mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$N/sys/fs/cgroup"
else
  mount -t tmpfs -o mode=0755,nosuid,nodev,noexec tmpfs "$N/sys/fs/cgroup"
  while read -r target fstype opts; do
    name="${target#/sys/fs/cgroup/}"
    mkdir -p "$N/sys/fs/cgroup/$name"
    if [ "$fstype" = cgroup2 ]; then
      mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$N/sys/fs/cgroup/$name"
    else
      o="$(echo "$opts" | tr , '\n' | grep -Ev '^(rw|ro|relatime|noatime|nosuid|nodev|noexec)$' | paste -sd,)"
      mount -t cgroup -o "nosuid,nodev,noexec,$o" cgroup "$N/sys/fs/cgroup/$name"
    fi
  done < <(findmnt -rn -R -o TARGET,FSTYPE,OPTIONS /sys/fs/cgroup | awk '$2 ~ /^cgroup2?$/')
fi
# /dev: a tmpfs with the usual nodes and a private devpts (like systemd-nspawn).
mount -t tmpfs -o mode=0755,nosuid tmpfs "$N/dev"
for n in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
  set -- $n; mknod -m 0666 "$N/dev/$1" c "$2" "$3"
done
mkdir "$N/dev/pts" "$N/dev/shm" "$N/dev/mqueue"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$N/dev/pts"
ln -s pts/ptmx "$N/dev/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$N/dev/shm"
ln -s /proc/self/fd "$N/dev/fd"; ln -s /proc/self/fd/0 "$N/dev/stdin"
ln -s /proc/self/fd/1 "$N/dev/stdout"; ln -s /proc/self/fd/2 "$N/dev/stderr"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$N/run"
# Boot to multi-user.target without this machine's own services (they would
# run on the overlay, but need not run at all).
for u in avahi-daemon.service avahi-daemon.socket postgresql.service getty@tty1.service \
         console-getty.service getty.target timers.target systemd-timesyncd.service \
         e2scrub_reap.service remote-fs.target systemd-pstore.service; do
  ln -sf /dev/null "$N/etc/systemd/system/$u"
done
cd "$N"
mkdir -p .oldroot
pivot_root . .oldroot
umount -l /.oldroot
rmdir /.oldroot
cd /
exec env -i container=airlock-test PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  /lib/systemd/systemd --unit=multi-user.target --log-target=console --show-status=false
BOOT

mkdir "$work/root"
(
  for d in "${cgdirs[@]}"; do echo "$BASHPID" > "$d/cgroup.procs"; done
  exec unshare --pid --fork --mount --propagation private --cgroup --net --uts --ipc \
    bash "$work/boot.sh" "$work/root" "$here" "$build"
) > "$bootlog" 2>&1 &
unshare_pid=$!

# The namespace's PID 1 is unshare's only child.
for _ in $(seq 1 50); do
  sd="$(pgrep -P "$unshare_pid" 2>/dev/null | head -1 || true)"
  [ -n "$sd" ] && break
  sleep 0.1
done
# Until airlock is installed, a failure is the mechanism's, not airlock's: skip.
[ -n "$sd" ] || { cat "$bootlog" >&2; skip "the namespaces could not be made (log above)"; }
echo "$sd" > "$pidfile"
# Run a command in every namespace of the booted system.
ns() { nsenter --target "$sd" --mount --pid --net --uts --ipc --cgroup -- env -i \
         PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

# --- Wait for the boot: systemctl is-system-running says running or degraded.
state=""
for _ in $(seq 1 120); do
  state="$(ns systemctl is-system-running 2>/dev/null || true)"
  case "$state" in running|degraded) break ;; esac
  kill -0 "$sd" 2>/dev/null || { cat "$bootlog" >&2; skip "systemd exited during boot (log above)"; }
  sleep 0.5
done
echo "systemd_test: systemd $(ns systemctl --version | head -1 | cut -d' ' -f2) booted as PID 1 (state: ${state:-unknown})"
case "$state" in running|degraded) ;; *) cat "$bootlog" >&2; skip "systemd did not finish booting (log above)" ;; esac
[ "$state" = degraded ] && ns systemctl --failed --no-legend --plain | sed 's/^/systemd_test: failed unit (not ours): /'

# --- dpkg -i: the deb is read from the lower layer (the host path).
ns dpkg -i "$deb" >/dev/null
ns systemctl daemon-reload   # postinst does this too, where /run/systemd/system exists
ns systemd-analyze verify --man=no /lib/systemd/system/airlock.service

# --- airlock doctor and selftest under exactly the unit's settings: a oneshot
# copy of airlock.service (same [Service] sandboxing, cgroup delegation,
# seccomp filters, mount namespace) whose command is the containment suite.
ns bash -c 'sed -e "s|^ExecStart=.*|ExecStart=/usr/bin/airlock doctor\nExecStart=/usr/bin/airlock selftest|" \
               -e "s|^Type=.*|Type=oneshot|" -e "/^ExecReload=/d" -e "/^Restart/d" -e "/^\[Install\]/,\$d" \
               /lib/systemd/system/airlock.service > /run/systemd/system/airlock-selftest.service'
ns systemctl daemon-reload
if ! ns systemctl start airlock-selftest; then
  ns journalctl -u airlock-selftest --no-pager -o cat >&2
  echo "systemd_test: airlock doctor/selftest failed under the unit's settings" >&2; exit 1
fi
# doctor's layer lines and the suite's verdict (the per-case table is long)
ns journalctl -u airlock-selftest --no-pager -o cat |
  grep -E ' (active|MISSING|degraded) |can run code|passed, .* failed' | cut -c1-200 | sed 's/^/selftest: /'
ns rm /run/systemd/system/airlock-selftest.service
ns systemctl daemon-reload

# --- systemctl start, wait for /readyz, status.
ns systemctl start airlock
ready=""
for _ in $(seq 1 60); do
  if ns curl -fsS -o /dev/null http://127.0.0.1:8787/readyz 2>/dev/null; then ready=1; break; fi
  sleep 0.5
done
ns systemctl status --no-pager --lines=20 airlock || true
[ -n "$ready" ] || { echo "systemd_test: airlock never became ready" >&2; ns journalctl -u airlock --no-pager >&2; exit 1; }
ns systemctl is-active --quiet airlock
mainpid="$(ns systemctl show -p MainPID --value airlock)"
echo "systemd_test: MainPID $mainpid, cgroup $(ns systemctl show -p ControlGroup --value airlock)"
# The unit's sandboxing really applies to the server (and so to every jail):
# no-new-privs, systemd's seccomp filters, its own mount namespace with /usr
# read-only and /proc/kmsg masked.
ns grep -E '^(NoNewPrivs|Seccomp):' /proc/"$mainpid"/status | tr '\n\t' '  ' | sed 's/^/systemd_test: server /; s/$/\n/'
ns grep -Eq '^NoNewPrivs:[[:space:]]+1' /proc/"$mainpid"/status
ns grep -Eq '^Seccomp:[[:space:]]+2' /proc/"$mainpid"/status
ns awk '$5 == "/usr" && $6 ~ /(^|,)ro(,|$)/ {u=1} $5 == "/proc/kmsg" {k=1} END {exit !(u && k)}' /proc/"$mainpid"/mountinfo
# Anything systemd said about the unit file (unknown or rejected settings).
if ns journalctl -b --no-pager -o cat | grep -E 'airlock\.service:[0-9]+:'; then
  echo "systemd_test: systemd complained about airlock.service" >&2; exit 1
fi

# --- An MCP SDK client over Streamable HTTP, and /metrics before and after.
runs() { ns curl -fsS http://127.0.0.1:8787/metrics | awk '/^airlock_runs_total/ {s+=$NF} END {print s+0}'; }
before="$(runs)"
ns bash -c "cd '$here/tests/e2e' && node --input-type=module -e '
  import { connectHttp, runCode } from \"./helpers.mjs\";
  const c = await connectHttp(\"http://127.0.0.1:8787/mcp\");
  const runs = [
    { language: \"bash\", code: \"echo packaged under systemd; id -u\" },
    { language: \"python\", code: \"import os; print(os.getuid(), \\\"hello\\\")\" },
    { language: \"javascript\", code: \"console.log(6*7)\", isolation: \"wasm\" },
  ];
  let bad = 0;
  for (const a of runs) {
    const r = (await runCode(c.client, a)).structuredContent;
    console.log(\"smoke:\", a.language, a.isolation ?? \"native\", r.status, JSON.stringify(r.stdout), r.status === \"ok\" ? \"\" : JSON.stringify(r));
    if (r.status !== \"ok\") bad++;
  }
  await c.close();
  process.exit(bad ? 1 : 0);
'"
after="$(runs)"
ns curl -fsS http://127.0.0.1:8787/metrics | grep '^airlock_runs_total' | sed 's/^/metrics: /'
echo "systemd_test: airlock_runs_total $before -> $after"
[ "$after" -ge $((before + 3)) ] || { echo "systemd_test: /metrics did not count the runs" >&2; exit 1; }

# --- systemctl reload: ExecReload sends SIGHUP; the server stays up, logs it.
ns systemctl reload airlock
sleep 1
ns systemctl is-active --quiet airlock
[ "$(ns systemctl show -p MainPID --value airlock)" = "$mainpid" ] || { echo "systemd_test: reload restarted the server" >&2; exit 1; }
ns curl -fsS -o /dev/null http://127.0.0.1:8787/readyz

# --- systemctl stop: SIGTERM to the main process, drain, "stopped cleanly", exit 0.
ns systemctl stop airlock
ns journalctl -u airlock --no-pager -o cat | sed 's/^/journal: /'
ns journalctl -u airlock --no-pager -o cat | grep -q 'stopped cleanly' || { echo "systemd_test: no clean stop in the journal" >&2; exit 1; }
result="$(ns systemctl show -p Result --value airlock)"
status="$(ns systemctl show -p ExecMainStatus --value airlock)"
echo "systemd_test: after stop: Result=$result ExecMainStatus=$status"
[ "$result" = success ] && [ "$status" = 0 ] || exit 1

# --- dpkg --purge with the server running again: prerm stops it (it drains),
# postrm reloads systemd; nothing of the package is left (in the overlay).
ns systemctl start airlock
ns dpkg --purge airlock >/dev/null
ns systemctl daemon-reload
if ns pgrep -x airlock >/dev/null; then echo "systemd_test: airlock still runs after purge" >&2; exit 1; fi
[ "$(ns systemctl show -p LoadState --value airlock)" = not-found ] || { echo "systemd_test: the unit is still loaded after purge" >&2; exit 1; }
for f in /usr/bin/airlock /lib/systemd/system/airlock.service /etc/airlock /var/lib/airlock /usr/lib/airlock; do
  if ns test -e "$f"; then echo "systemd_test: $f left behind after purge" >&2; exit 1; fi
done
echo "systemd_test: installed, started, used, reloaded, stopped and purged under systemd"
