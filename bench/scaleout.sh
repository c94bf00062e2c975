#!/usr/bin/env bash
# Scale-out benchmark (issue 22): runs/s of a CPU-bound python run behind one
# gateway with 1, 2 and 3 runner hosts, each host (and every jail it makes)
# held to the same CPU share in a cgroup of its own, so the scaling shows on
# one machine; then the latency of a trivial run through a remote runner host
# against the same gateway with its local runner. Needs root. The topology is
# tests/multihost's (tests/multihost/lib.sh): PostgreSQL 15 for the shared
# state, each runner host in its own network namespace, gRPC + mutual TLS.
#
#   bench/scaleout.sh [BUILD_DIR] [--runs 60] [--concurrency 6] [--rounds 2]
#                     [--latency-runs 40] [--quota 30000] [--no-pg] [--json OUT]
#
# --runs: runs per host count (split over --rounds interleaved rounds);
# --quota: cpu µs per 100 000 µs period for each runner host (30000: 0.3 of
# a core, so that three hosts (0.9) leave the gateway, PostgreSQL and the
# client room on a 2-core machine and 1 → 3 hosts scales; 50000 saturates a
# busy 2-core machine at 3 hosts); --no-pg: SQLite state (no PostgreSQL).
# Prints markdown tables.
# Asserts nothing about the figures.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
build="$repo/build"
if [[ $# -gt 0 && "$1" != --* ]]; then build="$1"; shift; fi
build="$(cd "$build" && pwd)"

runs=60 concurrency=6 rounds=2 latency_runs=40 quota=30000 use_pg=1 json_out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --latency-runs) latency_runs="$2"; shift 2 ;;
    --quota) quota="$2"; shift 2 ;;
    --no-pg) use_pg=0; shift ;;
    --json) json_out="$2"; shift 2 ;;
    *) echo "usage: $0 [BUILD_DIR] [--runs N] [--concurrency N] [--rounds N] [--latency-runs N] [--quota US] [--no-pg] [--json OUT]" >&2; exit 2 ;;
  esac
done

# shellcheck source=tests/multihost/lib.sh
source "$repo/tests/multihost/lib.sh"
[[ -d "$repo/tests/e2e/node_modules/@modelcontextprotocol/sdk" ]] ||
  mh_die "tests/e2e/node_modules is missing the MCP SDK: run 'npm ci' in tests/e2e" 2
mh_init "$build"
# shellcheck disable=SC2154
trap 'rc=$?; mh_teardown; exit $rc' EXIT
trap 'exit 130' INT TERM
"$MH_BIN" --help 2>/dev/null | grep -q runner-host || mh_die "$MH_BIN has no runner-host subcommand" 2

NHOSTS=3
period=100000

# --- a cgroup per runner host with the same CPU quota ------------------------------------
# cgroup v2 (cpu in the root's controllers): <root>/airlock-bench-PID/rhN
# with cpu.max; the memory and pids controllers are enabled down to rhN too
# (the runner host makes its jails' cgroups below its own). cgroup v1: the
# cpu hierarchy's airlock-bench-PID/rhN with cpu.cfs_quota_us. There a
# child's quota may not exceed its parent's (EINVAL), and every jail asks
# for one core, so below one core no jail could start: the runner host then
# runs with the cpu hierarchy unmounted in a mount namespace of its own,
# which makes it skip the jails' cpu cgroups (RLIMIT_CPU still holds) and
# leaves every jail in the runner host's cpu cgroup, under its quota.
cg_mode="" cg_root=""
# mountinfo: "... MOUNT_POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTS"
cg_mount() {  # cg_mount FSTYPE [CONTROLLER]: the first such mount point
  awk -v t="$1" -v c="${2:-}" '{
    for (i = 7; i <= NF; i++) if ($i == "-") break
    if ($(i + 1) != t) next
    if (c != "" && ("," $(i + 3) ",") !~ ("," c ",")) next
    print $5; exit
  }' /proc/self/mountinfo
}
v2_mount="$(cg_mount cgroup2)"
if [[ -n "$v2_mount" ]] && grep -qw cpu "$v2_mount/cgroup.controllers" 2>/dev/null; then
  cg_mode=v2
  cg_root="$v2_mount/airlock-bench-$MH_TAG"
  for c in cpu memory pids; do
    if grep -qw "$c" "$v2_mount/cgroup.controllers"; then
      echo "+$c" >"$v2_mount/cgroup.subtree_control" 2>/dev/null || true
    fi
  done
  mkdir "$cg_root"
  MH_CGROUP_DIRS+=("$cg_root")
  for c in cpu memory pids; do
    grep -qw "$c" "$cg_root/cgroup.controllers" && echo "+$c" >"$cg_root/cgroup.subtree_control"
  done
  for ((i = 1; i <= NHOSTS; i++)); do
    mkdir "$cg_root/rh$i"
    echo "$quota $period" >"$cg_root/rh$i/cpu.max"
  done
else
  v1_cpu="$(cg_mount cgroup cpu)"
  [[ -n "$v1_cpu" && -f "$v1_cpu/cpu.cfs_quota_us" ]] || mh_die "no cgroup cpu controller (v2 or v1) to limit the runner hosts with" 2
  cg_mode=v1
  cg_root="$v1_cpu/airlock-bench-$MH_TAG"
  mkdir "$cg_root"
  MH_CGROUP_DIRS+=("$cg_root")
  for ((i = 1; i <= NHOSTS; i++)); do
    mkdir "$cg_root/rh$i"
    echo "$period" >"$cg_root/rh$i/cpu.cfs_period_us"
    echo "$quota" >"$cg_root/rh$i/cpu.cfs_quota_us"
  done
  if ((quota < period)); then export MH_RH_HIDE_MOUNT="$v1_cpu"; fi
fi
set_quota() {  # set_quota N QUOTA|max
  if [[ "$cg_mode" == v2 ]]; then
    echo "$2 $period" >"$cg_root/rh$1/cpu.max"
  else
    [[ "$2" == max ]] && set -- "$1" -1
    echo "$2" >"$cg_root/rh$1/cpu.cfs_quota_us"
  fi
}

# --- topology ----------------------------------------------------------------------------
t0=$SECONDS
mh_certs "$NHOSTS"
for ((i = 1; i <= NHOSTS; i++)); do mh_netns "$i"; done
state=sqlite
if [[ "$use_pg" == 1 ]]; then mh_pg; state=postgres; fi
mh_runner_config "$MH_DIR/runner.json"
# Runs queue on the runner host, which admits as many as the gateway sends.
export MH_RH_MAX_CONCURRENT="$concurrency" MH_GW_PER_HOST="$concurrency"
export MH_GW_MAX_CONCURRENT=$((concurrency * 2)) MH_GW_MAX_QUEUED=64
for ((i = 1; i <= NHOSTS; i++)); do mh_start_runner "$i" "rh$i" "$MH_RH_PORT" ca1 "$cg_root/rh$i/cgroup.procs"; done
for ((i = 1; i <= NHOSTS; i++)); do mh_wait_probe "$i" "$MH_RH_PORT" 60; done
for ((i = 1; i <= NHOSTS; i++)); do
  pid="$(cat "$MH_DIR/pids/rh$i")"
  grep -q "airlock-bench-$MH_TAG/rh$i" "/proc/$pid/cgroup" || mh_die "runner host $i is not in its cgroup: $(cat "/proc/$pid/cgroup")"
done

# Gateways: hosts 1, 1-2, 1-3, and one with its local runner (latency).
urls=()
for k in 1 2 3; do
  mh_gateway_config "$MH_DIR/gw$k.json" "$(seq -s, 1 "$k")" "$state" 0
  port="$(mh_free_port)"
  mh_start_gateway "gw$k" "$MH_DIR/gw$k.json" "$port"
  mh_wait_gateway "gw$k" "$port"
  urls+=("http://127.0.0.1:$port/mcp")
done
# ... with the runner hosts' own settings (pool), so only where it runs differs.
MH_GW_EXTRA_JSON="$(cat "$MH_DIR/runner.json")" mh_gateway_config "$MH_DIR/gwlocal.json" local "$state" 0
port="$(mh_free_port)"
mh_start_gateway gwlocal "$MH_DIR/gwlocal.json" "$port"
mh_wait_gateway gwlocal "$port"
local_url="http://127.0.0.1:$port/mcp"
mh_log "set up in $((SECONDS - t0)) s (cgroup $cg_mode, quota $quota/$period per runner host, state $state)"

# --- measure -----------------------------------------------------------------------------
export AIRLOCK_BIN="$MH_BIN"
common=(--concurrency "$concurrency" --cg "$cg_mode $quota/$period" --state "$state")
[[ -n "$json_out" ]] && common+=(--json "$json_out")
node "$here/scaleout.mjs" throughput --runs "$runs" --rounds "$rounds" "${common[@]}" \
  --url "1=${urls[0]}" --url "2=${urls[1]}" --url "3=${urls[2]}" >"$MH_DIR/throughput.md"
# Latency: runner host 1 restarted as a plain one (no quota, and on cgroup
# v1 with its cpu hierarchy mounted again, so its jails get cpu cgroups as
# the local runner's do): only the remote path differs.
set_quota 1 max
rh1_pid="$(cat "$MH_DIR/pids/rh1")"
kill -TERM "$rh1_pid"
for _ in $(seq 100); do kill -0 "$rh1_pid" 2>/dev/null || break; sleep 0.1; done
unset MH_RH_HIDE_MOUNT
mh_start_runner 1 rh1 "$MH_RH_PORT" ca1
mh_wait_probe 1 "$MH_RH_PORT" 60
mh_wait_gateway gw1 "$(echo "${urls[0]}" | sed -E 's#.*:([0-9]+)/mcp#\1#')"
sleep 3  # the gateway's reconnect backoff and a health round
node "$here/scaleout.mjs" latency --runs "$latency_runs" "${common[@]}" \
  --url "remote=${urls[0]}" --url "local=$local_url" >"$MH_DIR/latency.md"
cat "$MH_DIR/throughput.md" "$MH_DIR/latency.md"
