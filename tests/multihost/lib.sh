# shellcheck shell=bash
# The multi-host topology on one machine (issue 22), shared by
# tests/multihost/run.sh and bench/scaleout.sh (source it; needs root):
#
#   PostgreSQL 15 (tests/pg/pg_server.sh) on a temporary directory and port,
#   certificates from two CAs (openssl, EC P-256), one network namespace per
#   runner host (alr-mhN-<pid>: veth, root side 10.77.N.1/24, namespace side
#   10.77.N.2/24), `airlock runner-host` in each, `airlock serve --http`
#   gateways in the root namespace on 127.0.0.1.
#
# Every process started here (and every process a test restarts, if it
# writes its pid to $MH_DIR/pids/NAME) is killed by mh_teardown; the
# namespaces and the temp dir are removed too.

MH_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MH_TAG="$$"
MH_RH_PORT=7700
MH_SERVER_NAME=airlock-runner-host
MH_KEEP="${MH_KEEP:-0}"   # 1: keep the temp dir (logs) after teardown

mh_log() { printf '[multihost %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
mh_die() { mh_log "error: $*"; exit "${2:-1}"; }

# mh_init BUILD_DIR: checks the tools, makes $MH_DIR, clears stale namespaces.
mh_init() {
  local build="$1"
  MH_BIN="${AIRLOCK_BIN:-$build/airlock}"
  [[ -x "$MH_BIN" ]] || mh_die "no airlock binary at $MH_BIN" 2
  [[ "$(id -u)" == 0 ]] || mh_die "needs root (network namespaces, jails)" 2
  command -v openssl >/dev/null || mh_die "openssl is missing" 2
  command -v ip >/dev/null || mh_die "ip (iproute2) is missing" 2
  MH_DIR="$(mktemp -d "${TMPDIR:-/tmp}/airlock-multihost-$MH_TAG-XXXXXX")"
  chmod 0700 "$MH_DIR"
  mkdir -p "$MH_DIR/pids" "$MH_DIR/logs" "$MH_DIR/certs"
  MH_NETNS=()
  MH_VETH=()
  mh_clear_stale
}

# Namespaces alr-mh<N>-<PID> (and their veths) of runs whose PID is gone.
mh_clear_stale() {
  local ns pid
  while read -r ns _; do
    [[ "$ns" =~ ^alr-mh[0-9]+-([0-9]+)$ ]] || continue
    pid="${BASH_REMATCH[1]}"
    if [[ "$pid" != "$MH_TAG" ]] && ! kill -0 "$pid" 2>/dev/null; then
      mh_log "removing stale namespace $ns"
      mh_kill_netns_procs "$ns"
      ip netns del "$ns" 2>/dev/null || true
    fi
  done < <(ip netns list 2>/dev/null)
  # The processes and PostgreSQL of a run that was SIGKILLed (no teardown):
  # its pid files (only processes that are still airlock's or nsenter's, in
  # case a pid was reused) and its PostgreSQL directory.
  local d f p
  for d in "${TMPDIR:-/tmp}"/airlock-multihost-*-*/ /tmp/alr-mh-pg-*-*/; do
    [[ -d "$d" && "$d" =~ -([0-9]+)-[A-Za-z0-9]+/$ ]] || continue
    pid="${BASH_REMATCH[1]}"
    if [[ "$pid" == "$MH_TAG" ]] || kill -0 "$pid" 2>/dev/null; then continue; fi
    mh_log "cleaning up after an earlier run: $d"
    for f in "$d"pids/*; do
      [[ -f "$f" ]] || continue
      p="$(tail -n 1 "$f")"
      [[ "$p" =~ ^[0-9]+$ ]] && grep -qaE 'airlock|nsenter|node' "/proc/$p/cmdline" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    done
    [[ -f "${d}data/postmaster.pid" ]] && "$MH_REPO/tests/pg/pg_server.sh" stop "${d%/}" >/dev/null 2>&1
    rm -rf "$d"
  done
  # A root-side veth whose namespace is gone disappears with its peer; one
  # left over (interrupted set-up) is named amh<PID>-<N>.
  local link
  while read -r link; do
    [[ "$link" =~ ^amh([0-9]+)-[0-9]+$ ]] || continue
    pid="${BASH_REMATCH[1]}"
    if [[ "$pid" != "$MH_TAG" ]] && ! kill -0 "$pid" 2>/dev/null; then
      ip link del "$link" 2>/dev/null || true
    fi
  done < <(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1)
}

# SIGKILLs the processes of one of our namespaces (they are ours: the name
# carries our pid or a dead run's).
mh_kill_netns_procs() {
  local ns="$1" p
  for p in $(ip netns pids "$ns" 2>/dev/null); do
    kill -KILL "$p" 2>/dev/null || true
  done
}

# --- certificates ---------------------------------------------------------------------

# _mh_leaf CA NAME CN EKU [SAN]: NAME.key / NAME.pem signed by CA (ca1|ca2).
_mh_leaf() {
  local ca="$1" name="$2" cn="$3" eku="$4" san="${5:-}" d="$MH_DIR/certs"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$name.key" 2>/dev/null
  openssl req -new -key "$d/$name.key" -subj "/O=airlock test/CN=$cn" -out "$d/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [[ -n "$san" ]] && echo "subjectAltName=$san"
  } >"$d/$name.ext"
  openssl x509 -req -in "$d/$name.csr" -CA "$d/$ca.pem" -CAkey "$d/$ca.key" -set_serial "0x$(openssl rand -hex 8)" \
    -days 2 -sha256 -extfile "$d/$name.ext" -out "$d/$name.pem" 2>/dev/null
  chmod 0600 "$d/$name.key"
  rm -f "$d/$name.csr" "$d/$name.ext"
}

# mh_certs NHOSTS: CA1 and CA2; for each host N rhN (CA1, server+client auth,
# SAN DNS:airlock-runner-host,IP:10.77.N.2); gw (CA1, client auth); the
# negative cases: rh-ca2 (a runner-host cert from CA2, SANs of every host)
# and gw-ca2 (a gateway cert from CA2).
mh_certs() {
  local n="$1" d="$MH_DIR/certs" ca i sans
  for ca in ca1 ca2; do
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$ca.key" 2>/dev/null
    openssl req -x509 -new -key "$d/$ca.key" -subj "/O=airlock test/CN=airlock test $ca $MH_TAG" -days 2 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out "$d/$ca.pem" 2>/dev/null
    chmod 0600 "$d/$ca.key"
  done
  sans="DNS:$MH_SERVER_NAME"
  for ((i = 1; i <= n; i++)); do
    _mh_leaf ca1 "rh$i" "$MH_SERVER_NAME" "serverAuth,clientAuth" "DNS:$MH_SERVER_NAME,IP:10.77.$i.2"
    sans+=",IP:10.77.$i.2"
  done
  _mh_leaf ca1 gw airlock-gateway clientAuth
  _mh_leaf ca2 rh-ca2 "$MH_SERVER_NAME" "serverAuth,clientAuth" "$sans"
  _mh_leaf ca2 gw-ca2 airlock-gateway clientAuth
  for i in $(seq 1 "$n") ; do
    openssl verify -CAfile "$d/ca1.pem" "$d/rh$i.pem" >/dev/null || mh_die "certificate rh$i does not verify"
  done
  openssl verify -CAfile "$d/ca1.pem" "$d/gw.pem" >/dev/null || mh_die "certificate gw does not verify"
  if openssl verify -CAfile "$d/ca1.pem" "$d/rh-ca2.pem" >/dev/null 2>&1; then
    mh_die "rh-ca2 verifies against CA1"
  fi
}

# --- network namespaces ---------------------------------------------------------------

mh_ns() { echo "alr-mh$1-$MH_TAG"; }

# mh_netns N: namespace alr-mhN-<pid>, lo up, veth amh<pid>-N (10.77.N.1/24)
# to eth0 inside (10.77.N.2/24).
mh_netns() {
  local n="$1" ns veth
  ns="$(mh_ns "$n")"
  veth="amh$MH_TAG-$n"
  ip -o addr show 2>/dev/null | grep -q " 10\.77\.$n\.1/" &&
    mh_die "10.77.$n.1 is already configured on this machine (another multihost run?)"
  ip netns add "$ns"
  MH_NETNS+=("$ns")
  ip netns exec "$ns" ip link set lo up
  ip link add "$veth" type veth peer name "${veth}p"
  MH_VETH+=("$veth")
  ip link set "${veth}p" netns "$ns"
  ip netns exec "$ns" ip link set "${veth}p" name eth0
  ip addr add "10.77.$n.1/24" dev "$veth"
  ip link set "$veth" up
  ip netns exec "$ns" ip addr add "10.77.$n.2/24" dev eth0
  ip netns exec "$ns" ip link set eth0 up
}

# --- PostgreSQL -----------------------------------------------------------------------

# mh_pg: starts PostgreSQL 15 on a free port; sets MH_DSN, MH_PG_DIR.
mh_pg() {
  local script="$MH_REPO/tests/pg/pg_server.sh" port
  [[ -x "$script" ]] || mh_die "$script is missing" 2
  port="$(mh_free_port)"
  # Not under $MH_DIR (0700, root's): the server runs as the postgres user,
  # which must reach its directory.
  MH_PG_DIR="$(mktemp -d "/tmp/alr-mh-pg-$MH_TAG-XXXXXX")"
  MH_PG_PORT="$port"
  MH_DSN="$("$script" start "$MH_PG_DIR" "$port" 2>"$MH_DIR/logs/pg_server.log")" ||
    { cat "$MH_DIR/logs/pg_server.log" >&2; mh_die "PostgreSQL did not start"; }
  MH_DSN="$(printf '%s' "$MH_DSN" | tail -n 1)"
  [[ -n "$MH_DSN" ]] || mh_die "pg_server.sh printed no DSN"
}

mh_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# --- runner hosts ---------------------------------------------------------------------

# mh_runner_config FILE: the runner hosts' own config (a small pool: three
# of them share this machine).
mh_runner_config() {
  cat >"$1" <<'EOF'
{"pool": {"max_per_language": 2, "max_total": 4}}
EOF
}

# mh_runner_argv N [CERT] [PORT] [CA]: prints the command line (one word per
# line) of runner host N: `nsenter --net=/run/netns/alr-mhN-PID airlock
# runner-host ...`. Not `ip netns exec`: it also unshares the mount namespace
# and mounts a fresh sysfs on /sys, which hides /sys/fs/cgroup from the
# runner host (no cgroups: no jails). nsenter enters the network namespace
# only, and execs (the pid is the runner host's).
mh_runner_argv() {
  local n="$1" cert="${2:-rh$1}" port="${3:-$MH_RH_PORT}" ca="${4:-ca1}" d="$MH_DIR/certs"
  printf '%s\n' nsenter "--net=/run/netns/$(mh_ns "$n")" "$MH_BIN" runner-host \
    --listen "10.77.$n.2:$port" --tls-ca "$d/$ca.pem" --tls-cert "$d/$cert.pem" --tls-key "$d/$cert.key" \
    --probe "10.77.$n.2:$((port + 100))" --state-dir "$MH_DIR/rh$n-$port-state" --config "$MH_DIR/runner.json" \
    --max-concurrent "${MH_RH_MAX_CONCURRENT:-4}"
}

# mh_start_runner N [CERT] [PORT] [CA] [CGROUP_PROCS_FILE...]: starts it in
# the background (moved into the given cgroups before exec when asked);
# pid in $MH_DIR/pids/rhN[-PORT], stderr in logs/rhN[-PORT].log.
mh_start_runner() {
  local n="$1" cert="${2:-rh$1}" port="${3:-$MH_RH_PORT}" ca="${4:-ca1}"
  shift $(($# < 4 ? $# : 4))
  local name="rh$n" argv
  [[ "$port" != "$MH_RH_PORT" ]] && name="rh$n-$port"
  mapfile -t argv < <(mh_runner_argv "$n" "$cert" "$port" "$ca")
  if [[ -n "${MH_RH_HIDE_MOUNT:-}" ]]; then
    # The runner host without this mount (a private mount namespace where it
    # is unmounted); bench/scaleout.sh on cgroup v1, see there. unshare and
    # sh exec, so the pid stays the runner host's.
    # shellcheck disable=SC2016
    argv=(unshare --mount --propagation slave sh -c 'umount -l "$0" && exec "$@"' "$MH_RH_HIDE_MOUNT" "${argv[@]}")
  fi
  mkdir -p "$MH_DIR/rh$n-$port-state"
  if [[ $# -gt 0 ]]; then
    # A subshell writes its own pid into each cgroup, then execs: the runner
    # host (and every jail it makes below its own cgroup) starts there.
    (
      for f in "$@"; do echo "$BASHPID" >"$f"; done
      exec "${argv[@]}"
    ) </dev/null >>"$MH_DIR/logs/$name.log" 2>&1 &
  else
    "${argv[@]}" </dev/null >>"$MH_DIR/logs/$name.log" 2>&1 &
  fi
  echo $! >"$MH_DIR/pids/$name"
  disown $!  # the test may SIGKILL it: no job-control notice
}

# mh_wait_probe N [PORT] [SECONDS]: until GET http://10.77.N.2:PORT+100/readyz is 200.
mh_wait_probe() {
  local n="$1" port="${2:-$MH_RH_PORT}" secs="${3:-30}" name="rh$1" end
  [[ "$port" != "$MH_RH_PORT" ]] && name="rh$n-$port"
  end=$((SECONDS + secs))
  while ((SECONDS < end)); do
    if curl -sf -o /dev/null --max-time 1 "http://10.77.$n.2:$((port + 100))/readyz"; then return 0; fi
    if ! kill -0 "$(cat "$MH_DIR/pids/$name")" 2>/dev/null; then
      tail -n 30 "$MH_DIR/logs/$name.log" >&2
      mh_die "runner host $name exited during start-up"
    fi
    sleep 0.2
  done
  tail -n 30 "$MH_DIR/logs/$name.log" >&2
  mh_die "runner host $name not ready within ${secs}s"
}

# --- gateways -------------------------------------------------------------------------

# mh_gateway_config FILE HOSTS(comma-separated N list, or "local") [STATE: postgres|sqlite] [API_KEYS 0|1]
mh_gateway_config() {
  local file="$1" hosts="$2" state="${3:-postgres}" keys="${4:-1}"
  MH_CFG_FILE="$file" MH_CFG_HOSTS="$hosts" MH_CFG_STATE="$state" MH_CFG_KEYS="$keys" \
  MH_CFG_CERTS="$MH_DIR/certs" MH_CFG_DSN="${MH_DSN:-}" MH_CFG_PORT="$MH_RH_PORT" \
  MH_CFG_SN="$MH_SERVER_NAME" MH_CFG_KEYS_FILE="${MH_KEYS_FILE_MODE:-}" MH_CFG_DIR="$MH_DIR" \
  python3 - <<'EOF'
import json, os
e = os.environ
c = {}
if e["MH_CFG_HOSTS"] != "local":
    d = e["MH_CFG_CERTS"]
    c["runner"] = {
        "hosts": [f"10.77.{n}.2:{e['MH_CFG_PORT']}" for n in e["MH_CFG_HOSTS"].split(",")],
        "tls": {"ca_file": f"{d}/ca1.pem", "cert_file": f"{d}/gw.pem", "key_file": f"{d}/gw.key",
                "server_name": e["MH_CFG_SN"]},
        "health_interval_ms": 300, "health_timeout_ms": 1500,
        "max_concurrent_per_host": int(e.get("MH_GW_PER_HOST", "4")),
    }
# Enough slots that runs queue on the hosts, not in the gateway (0 would
# mean this machine's core count).
c["server"] = {"max_concurrent_runs": int(e.get("MH_GW_MAX_CONCURRENT", "12")),
               "max_queued_runs": int(e.get("MH_GW_MAX_QUEUED", "64"))}
if e["MH_CFG_STATE"] == "postgres":
    c["state"] = {"backend": "postgres", "postgres_dsn": e["MH_CFG_DSN"]}
if e["MH_CFG_KEYS"] == "1":
    # The interface agreed for issue 22 is server.http.api_keys: true (keys in
    # PostgreSQL); MH_KEYS_FILE_MODE=1 uses the older server.http.keys_file.
    if e["MH_CFG_KEYS_FILE"] == "1":
        c["server"]["http"] = {"keys_file": os.path.join(e["MH_CFG_DIR"], "keys.json")}
    else:
        c["server"]["http"] = {"api_keys": True}
# Extra top-level keys (JSON object), e.g. the runner hosts' pool settings
# for a gateway with its local runner.
c.update(json.loads(e.get("MH_GW_EXTRA_JSON") or "{}"))
with open(e["MH_CFG_FILE"], "w") as f:
    json.dump(c, f, indent=1)
os.chmod(e["MH_CFG_FILE"], 0o600)
EOF
}

# mh_gateway_argv NAME CONFIG PORT: one word per line.
mh_gateway_argv() {
  printf '%s\n' "$MH_BIN" serve --http "127.0.0.1:$3" --config "$2" --state-dir "$MH_DIR/$1-state"
}

# mh_start_gateway NAME CONFIG PORT: pid in pids/NAME, stderr in logs/NAME.log.
mh_start_gateway() {
  local name="$1" argv
  mapfile -t argv < <(mh_gateway_argv "$@")
  mkdir -p "$MH_DIR/$name-state"
  "${argv[@]}" </dev/null >>"$MH_DIR/logs/$name.log" 2>&1 &
  echo $! >"$MH_DIR/pids/$name"
  disown $!
}

# mh_wait_gateway NAME PORT [SECONDS] [PATH]: until GET /readyz (or PATH) is 200.
mh_wait_gateway() {
  local name="$1" port="$2" secs="${3:-60}" path="${4:-/readyz}" end
  end=$((SECONDS + secs))
  while ((SECONDS < end)); do
    if curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$port$path"; then return 0; fi
    if ! kill -0 "$(cat "$MH_DIR/pids/$name")" 2>/dev/null; then
      tail -n 30 "$MH_DIR/logs/$name.log" >&2
      mh_die "gateway $name exited during start-up"
    fi
    sleep 0.2
  done
  tail -n 30 "$MH_DIR/logs/$name.log" >&2
  mh_die "gateway $name not ready within ${secs}s"
}

# --- teardown -------------------------------------------------------------------------

# Processes first (TERM, then KILL after 5 s), then namespaces, PostgreSQL,
# the cgroups the bench made (mh_cgroup_dirs), the temp dir.
mh_teardown() {
  set +e
  local f p pids=()
  if [[ -n "${MH_DIR:-}" && -d "$MH_DIR/pids" ]]; then
    for f in "$MH_DIR"/pids/*; do
      [[ -f "$f" ]] || continue
      while read -r p; do
        [[ "$p" =~ ^[0-9]+$ ]] && kill -0 "$p" 2>/dev/null && { kill -TERM "$p" 2>/dev/null; pids+=("$p"); }
      done <"$f"
    done
    local end=$((SECONDS + 5))
    for p in "${pids[@]}"; do
      while kill -0 "$p" 2>/dev/null && ((SECONDS < end)); do sleep 0.1; done
      kill -KILL "$p" 2>/dev/null
    done
  fi
  local ns
  for ns in "${MH_NETNS[@]}"; do
    mh_kill_netns_procs "$ns"
    ip netns del "$ns" 2>/dev/null
  done
  local v
  for v in "${MH_VETH[@]}"; do ip link del "$v" 2>/dev/null; done
  if [[ -n "${MH_PG_DIR:-}" ]]; then
    "$MH_REPO/tests/pg/pg_server.sh" stop "$MH_PG_DIR" >/dev/null 2>&1
    if [[ "$MH_KEEP" == 1 ]]; then mh_log "kept $MH_PG_DIR"; else rm -rf "$MH_PG_DIR"; fi
  fi
  local cg
  for cg in "${MH_CGROUP_DIRS[@]}"; do
    # Leaves first (the runner hosts' leftovers below them too).
    find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  if [[ -n "${MH_DIR:-}" && -d "$MH_DIR" ]]; then
    if [[ "$MH_KEEP" == 1 ]]; then
      mh_log "kept $MH_DIR"
    else
      rm -rf "$MH_DIR"
    fi
  fi
}
MH_CGROUP_DIRS=()
