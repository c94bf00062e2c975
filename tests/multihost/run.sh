#!/usr/bin/env bash
# The multi-host test (issue 22): two gateways and three runner hosts on
# this machine, each runner host in its own network namespace, over gRPC
# with mutual TLS, sharing one throwaway PostgreSQL 15; then
# tests/multihost/*.test.mjs (node:test + the MCP SDK clients) against
# them: multihost.test.mjs, then round_robin.test.mjs (the two gateways
# behind the round-robin proxy round_robin.mjs, issue 30). Needs root.
#
#   tests/multihost/run.sh [BUILD_DIR]          # default: <repo>/build
#   MH_KEEP=1 tests/multihost/run.sh build      # keep the temp dir (logs, certs)
#   MH_ONLY='sessions' tests/multihost/run.sh   # only tests whose name matches
#   MH_ONLY='round-robin' tests/multihost/run.sh   # the round-robin part (issue 30)
#
# The tests get everything through $MH_TOPOLOGY (a JSON file: URLs, keys,
# configs, the runner hosts' and gateways' command lines, pid files and
# logs). Exits 0 when every test passed, 1 when one failed, 2 when it could
# not run. Everything it started is stopped on exit, failure or not.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
build="$(cd "$build" && pwd)"

# shellcheck source=tests/multihost/lib.sh
source "$here/lib.sh"

e2e="$repo/tests/e2e"
[[ -d "$e2e/node_modules/@modelcontextprotocol/sdk" ]] ||
  mh_die "$e2e/node_modules is missing the MCP SDK: run 'npm ci' in $e2e" 2
command -v node >/dev/null || mh_die "node is missing" 2
command -v curl >/dev/null || mh_die "curl is missing" 2
command -v nsenter >/dev/null || mh_die "nsenter (util-linux) is missing" 2

mh_init "$build"
# shellcheck disable=SC2154
trap 'rc=$?; mh_teardown; exit $rc' EXIT
trap 'exit 130' INT TERM

if ! "$MH_BIN" --help 2>/dev/null | grep -q "runner-host"; then
  mh_die "$MH_BIN has no runner-host subcommand" 2
fi

t0=$SECONDS
NHOSTS=3
mh_log "certificates, namespaces, PostgreSQL ($MH_DIR)"
mh_certs "$NHOSTS"
for ((i = 1; i <= NHOSTS; i++)); do mh_netns "$i"; done
mh_pg
mh_runner_config "$MH_DIR/runner.json"

# A secret in the environment of every runner host and gateway: no jail may see it.
MH_PLANTED_SECRET="planted-$(openssl rand -hex 12)"
export MH_PLANTED_SECRET
# ... and one in a file on this machine, outside every jail.
(umask 077 && echo "$MH_PLANTED_SECRET" >"$MH_DIR/planted-secret.txt")

mh_log "runner hosts"
for ((i = 1; i <= NHOSTS; i++)); do mh_start_runner "$i"; done
for ((i = 1; i <= NHOSTS; i++)); do mh_wait_probe "$i"; done

hosts="$(seq -s, 1 "$NHOSTS")"
# Tasks (round_robin.test.mjs): a modern run_code asking timeout_ms >= 20 s
# becomes a task; a short lease, so that a killed gateway's task reads
# failed within seconds. Legacy-era clients never get tasks.
export MH_GW_EXTRA_JSON='{"tasks": {"mode": "long", "min_timeout_ms": 20000, "lease_s": 3, "poll_interval_ms": 200}}'
mh_gateway_config "$MH_DIR/gwA.json" "$hosts" postgres 1
mh_gateway_config "$MH_DIR/gwB.json" "$hosts" postgres 1
unset MH_GW_EXTRA_JSON

# Keys (in PostgreSQL, through gateway A's config): an admin for the console,
# a reader for the runs, and one that gets revoked.
key_json() {
  "$MH_BIN" keys --config "$MH_DIR/gwA.json" --json --as multihost-test create --user "$1" --role "$2" --name "$3"
}
key_json alice admin console >"$MH_DIR/key-admin.json"
key_json bob reader runs >"$MH_DIR/key-user.json"
key_json carol reader revoked-later >"$MH_DIR/key-victim.json"

mh_log "gateways"
portA="$(mh_free_port)"
portB="$(mh_free_port)"
while [[ "$portB" == "$portA" ]]; do portB="$(mh_free_port)"; done
mh_start_gateway gwA "$MH_DIR/gwA.json" "$portA"
mh_start_gateway gwB "$MH_DIR/gwB.json" "$portB"
mh_wait_gateway gwA "$portA"
mh_wait_gateway gwB "$portB"
mh_log "set up in $((SECONDS - t0)) s"

# The topology for the tests.
export MH_DIR MH_BIN MH_DSN MH_PG_PORT NHOSTS portA portB
MH_RH_ARGV="$(for ((i = 1; i <= NHOSTS; i++)); do mh_runner_argv "$i" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().splitlines()))'; done)"
MH_GW_ARGV="$(for g in "gwA $MH_DIR/gwA.json $portA" "gwB $MH_DIR/gwB.json $portB"; do
  # shellcheck disable=SC2086
  mh_gateway_argv $g | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().splitlines()))'
done)"
export MH_RH_ARGV MH_GW_ARGV MH_SERVER_NAME MH_RH_PORT MH_TAG
python3 - >"$MH_DIR/topology.json" <<'EOF'
import json, os
e = os.environ
d = e["MH_DIR"]
rh_argv = [json.loads(l) for l in e["MH_RH_ARGV"].splitlines()]
gw_argv = [json.loads(l) for l in e["MH_GW_ARGV"].splitlines()]
port = int(e["MH_RH_PORT"])
def key(name):
    with open(f"{d}/key-{name}.json") as f:
        return json.load(f)
t = {
    "dir": d,
    "bin": e["MH_BIN"],
    "dsn": e["MH_DSN"],
    "pg_port": int(e["MH_PG_PORT"]),
    "tag": e["MH_TAG"],
    "planted_secret": e["MH_PLANTED_SECRET"],
    "planted_file": f"{d}/planted-secret.txt",
    "certs": f"{d}/certs",
    "server_name": e["MH_SERVER_NAME"],
    "runner_config": f"{d}/runner.json",
    "runner_hosts": [
        {"n": n, "addr": f"10.77.{n}.2:{port}", "probe": f"10.77.{n}.2:{port + 100}", "root_ip": f"10.77.{n}.1",
         "netns": f"alr-mh{n}-{e['MH_TAG']}", "argv": rh_argv[n - 1], "pid_file": f"{d}/pids/rh{n}",
         "log": f"{d}/logs/rh{n}.log", "tls_key": f"{d}/certs/rh{n}.key"}
        for n in range(1, int(e["NHOSTS"]) + 1)
    ],
    "gateways": [
        {"name": name, "port": int(p), "url": f"http://127.0.0.1:{p}/mcp", "console": f"http://127.0.0.1:{p}/console/",
         "config": f"{d}/{name}.json", "argv": argv, "pid_file": f"{d}/pids/{name}", "log": f"{d}/logs/{name}.log"}
        for name, p, argv in (("gwA", e["portA"], gw_argv[0]), ("gwB", e["portB"], gw_argv[1]))
    ],
    "keys": {"admin": key("admin"), "user": key("user"), "victim": key("victim")},
}
print(json.dumps(t, indent=1))
EOF
chmod 0600 "$MH_DIR/topology.json"

mh_log "node --test tests/multihost/*.test.mjs"
export MH_TOPOLOGY="$MH_DIR/topology.json"
export AIRLOCK_BIN="$MH_BIN"
node_args=(--test --test-concurrency=1 --test-timeout=180000 --test-reporter=spec)
[[ -n "${MH_ONLY:-}" ]] && node_args+=(--test-name-pattern "$MH_ONLY")
rc=0
# In the background and waited for, so that SIGTERM/SIGINT tear down at once
# (the teardown ends node too: its pid is in pids/).
(cd "$e2e" && exec node "${node_args[@]}" "$here"/*.test.mjs) &
echo $! >"$MH_DIR/pids/node"
wait $! || rc=$?
mh_log "tests finished in $((SECONDS - t0)) s (exit $rc)"
if [[ $rc != 0 ]]; then
  for f in "$MH_DIR"/logs/*.log; do
    echo "--- tail of $(basename "$f")" >&2
    tail -n 25 "$f" >&2 || true
  done
  exit 1
fi
exit 0
