#!/usr/bin/env bash
# The Kubernetes manifests (deploy/kubernetes/) under `podman kube play`
# (issue 33): the OCI image (built or reused, tests/oci/lib.sh), the mutual-TLS
# certificates from deploy/kubernetes/make-certs.sh, PostgreSQL 15
# (tests/pg/pg_server.sh through tests/multihost/lib.sh's mh_pg), the runner
# host's StatefulSet and the gateway's Deployment played from a test overlay
# of the real manifests (tests/oci/kube_overlay.py says what it changes and
# why; docs/deploy.md#podman-kube-play-test), then: the probes' own requests
# answer, `airlock keys create` in the gateway pod (as docs/deploy.md tells
# operators), and the MCP SDK client (tests/oci/kube_play.mjs) runs code
# through the gateway on the runner host pod (the result's runner_host is
# that pod's IP), with an escape attempt contained; the audit log in
# PostgreSQL has the run and /metrics (with the token) counts it.
# Everything is torn down in a trap: pods, their volumes, the podman secrets,
# the network, the PostgreSQL forwarder and server, the temp dir.
# Exit 77 (skipped) only where podman cannot run here.
#   tests/oci/kube_play_test.sh BUILD_DIR
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
name=kube_play
skip() { echo "$name: $*; skipped" >&2; exit 77; }
log() { echo "$name: $*"; }
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap --mode=root, rootful podman)"
for t in podman mmdebstrap runc node curl openssl; do command -v "$t" >/dev/null || skip "$t is missing (scripts/setup.sh installs it)"; done
podman info >/dev/null 2>&1 || skip "podman info fails: podman cannot run on this host"
# kube play builds its pod's infra (pause) image locally around catatonit.
command -v catatonit >/dev/null || [ -x /usr/libexec/podman/catatonit ] ||
  skip "catatonit is missing: podman kube play cannot make a pod's infra container (scripts/setup.sh installs it)"
python3 -c 'import yaml' 2>/dev/null || { echo "$name: python3-yaml is missing (scripts/setup.sh installs it)" >&2; exit 1; }

# shellcheck source=tests/oci/lib.sh
. "$repo/tests/oci/lib.sh"
# shellcheck source=tests/multihost/lib.sh
. "$repo/tests/multihost/lib.sh"
t0=$(date +%s)
oci_image_ready "$build" "$name"
image="$OCI_IMAGE"

manifests="$repo/deploy/kubernetes"
tag="airlock-kube-$$"
tmp="$(mktemp -d "/tmp/$tag.XXXXXX")"
MH_DIR="$tmp"  # mh_pg's log goes there
# kube play runs in an empty directory: it looks for a build context named
# after the image's last path component (airlock/Containerfile) in the
# working directory, even without --build, and fails where that is a file
# (ctest runs in build/, which holds the airlock binary).
mkdir -p "$tmp/logs" "$tmp/play"
net="$tag"
secrets=(airlock-runner-host-tls airlock-gateway-tls airlock-db airlock-metrics-token)
runner_pod=airlock-runner-host-pod-0
gateway_pod=airlock-gateway-pod-0
runner_ctr=$runner_pod-runner-host
gateway_ctr=$gateway_pod-gateway
fwd_pid=""
pod_cgroups=()  # the pods' cgroup paths (podman pod inspect), for cleanup
# podman as this test runs it: runc (crun refuses hybrid cgroup v1 hosts) and
# a containers.conf whose default ulimits this (possibly nested) root may
# set: kube play has no --ulimit, and podman's default nofile is above
# this machine's hard limit (runc: "error setting rlimit type 7"). The same
# ulimits image_test.sh passes with --ulimit.
sed "/^\[containers\]/a default_ulimits = [\"nofile=$(ulimit -Hn):$(ulimit -Hn)\", \"nproc=4096:4096\"]" \
  /usr/share/containers/containers.conf >"$tmp/containers.conf"
grep -q default_ulimits "$tmp/containers.conf" || { echo "$name: no [containers] in containers.conf" >&2; exit 1; }
export CONTAINERS_CONF="$tmp/containers.conf"
pm() { podman --runtime runc "$@"; }

# The pods' volumes (emptyDirs, the secret volumes kube play makes), listed
# before the pods go.
pod_volumes() {
  local c
  for c in "$runner_ctr" "$gateway_ctr"; do
    pm inspect --format '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}}{{"\n"}}{{end}}{{end}}' "$c" 2>/dev/null || true
  done
}
remove_all() {
  local - vols f  # `local -`: the set +e below ends with the function
  set +e
  # kube play names each secret volume after its Secret (ours, by name),
  # and may have made one before failing to make the pod.
  vols="$( (pod_volumes; printf '%s\n' "${secrets[@]}") | sort -u)"
  for f in "$runner_pod" "$gateway_pod"; do
    podman pod exists "$f" && pod_cgroups+=("$(podman pod inspect --format '{{.CgroupPath}}' "$f")")
  done
  for f in "$tmp"/gateway.yaml "$tmp"/runner.yaml; do
    [ -f "$f" ] && pm kube down "$f" >/dev/null 2>&1
  done
  pm pod rm -f -t 2 "$gateway_pod" "$runner_pod" >/dev/null 2>&1
  # podman's cgroupfs manager removes a pod's cgroup from the v1 controllers
  # but not from the named hierarchies of a hybrid host (systemd, unified):
  # the empty directories stay behind unless removed here.
  local cg h
  for cg in "${pod_cgroups[@]}"; do
    for h in /sys/fs/cgroup/*"$cg"; do
      [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
  done
  for f in $vols; do podman volume exists "$f" && pm volume rm -f "$f" >/dev/null 2>&1; done
  for f in "${secrets[@]}"; do pm secret rm "$f" >/dev/null 2>&1; done
  pm network rm -f "$net" >/dev/null 2>&1
  # The CNI host-local IPAM state of the network, which `network rm` leaves.
  rm -rf "/var/lib/cni/networks/$net"
  return 0
}
cleanup() {
  local rc=$?
  set +e
  if [ "$rc" != 0 ] && [ -n "${tmp:-}" ]; then
    for c in "$runner_ctr" "$gateway_ctr"; do
      echo "--- podman logs $c (last 40 lines)" >&2
      pm logs "$c" 2>&1 | grep -v 'healthcheck' | tail -40 >&2
    done
  fi
  remove_all
  [ -n "$fwd_pid" ] && kill "$fwd_pid" 2>/dev/null && wait "$fwd_pid" 2>/dev/null
  if [ -n "${MH_PG_DIR:-}" ]; then
    "$repo/tests/pg/pg_server.sh" stop "$MH_PG_DIR" >/dev/null 2>&1
    rm -rf "$MH_PG_DIR"
  fi
  rm -rf "$tmp"
  unset CONTAINERS_CONF
  # Nothing of ours may remain.
  local left
  left="$(podman pod ps -q --filter "name=^($runner_pod|$gateway_pod)\$"; podman network ls -q --filter "name=^$net\$"
          podman volume ls -q | grep -E '^airlock-(gateway|runner-host)-|^airlock-(db|metrics-token)$'
          podman secret ls --format '{{.Name}}' | grep -E "^($(IFS='|'; echo "${secrets[*]}"))\$"
          for cg in "${pod_cgroups[@]}"; do ls -d /sys/fs/cgroup/*"$cg" 2>/dev/null; done)"
  if [ -n "$left" ]; then echo "$name: left behind: $left" >&2; [ "$rc" = 0 ] && rc=1; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A pod of these names from an earlier run (killed before its trap ran) would
# make kube play fail; they are this test's (only it plays these manifests
# on this machine), as are podman secrets of these names.
for p in "$runner_pod" "$gateway_pod"; do
  if podman pod exists "$p"; then log "removing $p left by an earlier run"; fi
done
remove_all
for n in $(podman network ls --format '{{.Name}}' | grep -E '^airlock-kube-[0-9]+$' || true); do
  kill -0 "${n##*-}" 2>/dev/null || { log "removing network $n left by an earlier run"; podman network rm -f "$n" >/dev/null; }
done

# --- certificates, PostgreSQL, network ------------------------------------------------
sh "$manifests/make-certs.sh" "$tmp/certs" >/dev/null
mh_pg  # MH_DSN (host=127.0.0.1 port=...), MH_PG_DIR, MH_PG_PORT
log "PostgreSQL on 127.0.0.1:$MH_PG_PORT"
pm network create --label "io.airlock.test=$name" "$net" >/dev/null
bridge_ip="$(podman network inspect --format '{{range .Subnets}}{{.Gateway}}{{end}}' "$net")"
[ -n "$bridge_ip" ] || { echo "$name: network $net has no gateway address" >&2; exit 1; }
metrics_token="$(openssl rand -hex 32)"

# Host ports for every containerPort (kube_overlay.py change 7).
rh_grpc=$(mh_free_port); rh_probe=$(mh_free_port); gw_http=$(mh_free_port); gw_metrics=$(mh_free_port)

# --- the runner host ------------------------------------------------------------------
python3 "$repo/tests/oci/kube_overlay.py" runner "$manifests" "$tmp/certs" "$image" "$tmp" \
  "grpc=$rh_grpc,probe=$rh_probe" >"$tmp/runner.yaml"
pm secret create airlock-runner-host-tls "$tmp/secrets/airlock-runner-host-tls.yaml" >/dev/null
(cd "$tmp/play" && pm kube play --network "$net" "$tmp/runner.yaml") >"$tmp/logs/play-runner.log" 2>&1 ||
  { grep -v healthcheck "$tmp/logs/play-runner.log" >&2; exit 1; }
runner_ip="$(podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$runner_ctr")"
log "runner host pod $runner_pod at $runner_ip"

# The probes as the kubelet sends them (podman runs none): path, port and
# Host header from the played manifest. probes FILE KIND -> "URL HOST" lines.
probes() {
  python3 - "$1" "$2" <<'EOF'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    for c in d["spec"]["template"]["spec"]["containers"]:
        ports = {p["name"]: p["hostPort"] for p in c["ports"]}
        g = c[sys.argv[2]]["httpGet"]
        host = next(h["value"] for h in g.get("httpHeaders", []) if h["name"] == "Host")
        print(f"http://127.0.0.1:{ports[g['port']]}{g['path']} {host}")
EOF
}
wait_probe() {  # FILE KIND CONTAINER SECONDS
  local url host end
  read -r url host < <(probes "$1" "$2")
  end=$((SECONDS + $4))
  while ((SECONDS < end)); do
    if curl -fs -o /dev/null --max-time 2 -H "Host: $host" "$url"; then log "$3: $2 $url (Host: $host) ok"; return 0; fi
    [ "$(podman inspect --format '{{.State.Status}}' "$3")" = running ] || sleep 1  # restarting
    sleep 0.5
  done
  echo "$name: $3: $2 $url (Host: $host) not ok within $4 s" >&2
  return 1
}
wait_probe "$tmp/runner.yaml" readinessProbe "$runner_ctr" 60
wait_probe "$tmp/runner.yaml" livenessProbe "$runner_ctr" 5
# privileged: true (the manifest's own securityContext) is all the runner
# host needs: doctor in the pod finds every layer.
pm exec "$runner_ctr" airlock doctor >"$tmp/logs/doctor.log" 2>&1 ||
  { cat "$tmp/logs/doctor.log" >&2; echo "$name: airlock doctor fails in the runner host pod" >&2; exit 1; }
grep -q "every isolation layer active" "$tmp/logs/doctor.log"
log "doctor in the runner host pod: every isolation layer active"

# --- PostgreSQL for the gateway pod ---------------------------------------------------
# pg_server.sh listens on 127.0.0.1 only (and its pg_hba admits 127.0.0.1):
# a forwarder on this machine's address on the pod network carries the
# gateway's connections to it (the gateway pod sees a "PostgreSQL outside
# the cluster", as in production).
fwd_port=$(mh_free_port)
python3 - "$bridge_ip" "$fwd_port" "$MH_PG_PORT" >"$tmp/logs/forwarder.log" 2>&1 <<'EOF' &
import socket, sys, threading
lhost, lport, tport = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
srv = socket.create_server((lhost, lport))
def pipe(a, b):
    try:
        while (d := a.recv(65536)):
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
while True:
    c, _ = srv.accept()
    u = socket.create_connection(("127.0.0.1", tport))
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
EOF
fwd_pid=$!
for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/$bridge_ip/$fwd_port") 2>/dev/null && break; sleep 0.1; done
dsn="${MH_DSN/host=127.0.0.1 port=$MH_PG_PORT/host=$bridge_ip port=$fwd_port}"

# --- the gateway ----------------------------------------------------------------------
python3 "$repo/tests/oci/kube_overlay.py" gateway "$manifests" "$tmp/certs" "$image" "$tmp" \
  "http=$gw_http,metrics=$gw_metrics" "$dsn" "$metrics_token" "$runner_ip" >"$tmp/gateway.yaml"
for s in airlock-gateway-tls airlock-db airlock-metrics-token; do
  pm secret create "$s" "$tmp/secrets/$s.yaml" >/dev/null
done
(cd "$tmp/play" && pm kube play --network "$net" "$tmp/gateway.yaml") >"$tmp/logs/play-gateway.log" 2>&1 ||
  { grep -v healthcheck "$tmp/logs/play-gateway.log" >&2; exit 1; }
gateway_ip="$(podman inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$gateway_ctr")"
log "gateway pod $gateway_pod at $gateway_ip"
wait_probe "$tmp/gateway.yaml" readinessProbe "$gateway_ctr" 90
wait_probe "$tmp/gateway.yaml" livenessProbe "$gateway_ctr" 5
# The gateway runs as the manifest's runAsUser (the uid of airlock in the
# container, seen from this machine: no user namespace), the runner host as root.
uid_of() { awk '/^Uid:/ {print $2}' "/proc/$(podman inspect --format '{{.State.Pid}}' "$1")/status"; }
[ "$(uid_of "$gateway_ctr")" = 65532 ] && [ "$(uid_of "$runner_ctr")" = 0 ] ||
  { echo "$name: gateway uid $(uid_of "$gateway_ctr"), runner host uid $(uid_of "$runner_ctr"): not runAsUser's 65532 and 0" >&2; exit 1; }

# An API key, as docs/deploy.md (Installing, step 8) tells operators: in the
# gateway pod, into PostgreSQL.
key="$(pm exec "$gateway_ctr" airlock keys create --config /etc/airlock/airlock.json --user kube-play --role admin 2>"$tmp/logs/keys.log")" ||
  { cat "$tmp/logs/keys.log" >&2; echo "$name: airlock keys create failed in the gateway pod" >&2; exit 1; }
log "$(tail -1 "$tmp/logs/keys.log")"

# The control for the escape probes: the runner host pod itself reaches
# every address the jail must not (PostgreSQL's forwarder, the gateway pod).
esc_probes=("$bridge_ip:$fwd_port" "$gateway_ip:8787" "$runner_ip:7701")
for hp in "${esc_probes[@]}"; do
  pm exec "$runner_ctr" python3 -c 'import socket,sys; h,p=sys.argv[1].rsplit(":",1); socket.create_connection((h,int(p)),timeout=3)' "$hp" ||
    { echo "$name: the runner host pod cannot reach $hp: the escape probe would prove nothing" >&2; exit 1; }
done

probes_json="$(printf '%s\n' "${esc_probes[@]}" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().split()))')"
AIRLOCK_KP_URL="http://localhost:$gw_http/mcp" AIRLOCK_KP_KEY="$key" AIRLOCK_KP_RUNNER="$runner_ip:7700" \
  AIRLOCK_KP_PROBES="$probes_json" node --test --test-concurrency=1 "$repo/tests/oci/kube_play.mjs"

# The runner host saw the gateway pod come in with its client certificate
# (CN airlock-gateway, from make-certs.sh) from the gateway pod's address.
pm logs "$runner_ctr" 2>&1 | grep -q "gateway airlock-gateway@ipv4:$gateway_ip:" ||
  { echo "$name: the runner host's log shows no mutual-TLS connection from the gateway pod ($gateway_ip)" >&2; exit 1; }

# The gateway's /metrics (metrics port, the token from airlock-metrics-token)
# counted the runs, refused without the token.
code="$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: localhost' "http://127.0.0.1:$gw_metrics/metrics")"
[ "$code" = 401 ] || [ "$code" = 403 ] || { echo "$name: /metrics without the token answered $code" >&2; exit 1; }
curl -fsS -H 'Host: localhost' -H "Authorization: Bearer $metrics_token" "http://127.0.0.1:$gw_metrics/metrics" >"$tmp/metrics"
grep -E '^airlock_runs_total\{' "$tmp/metrics" | head -5 || true
ok_runs="$(awk '/^airlock_runs_total\{/ && /status="ok"/ {s += $NF} END {print s + 0}' "$tmp/metrics")"
((ok_runs >= 3)) || { echo "$name: /metrics counts $ok_runs ok runs, expected at least 3" >&2; exit 1; }
log "gateway /metrics: $ok_runs ok runs"

# The state is in PostgreSQL (state.backend postgres through the forwarder):
# the key's row, and the audit log's runs by that key's user.
psql_q() { runuser -u postgres -- /usr/lib/postgresql/15/bin/psql -X -qtA -h "$MH_PG_DIR" -p "$MH_PG_PORT" -U postgres -d airlock -c "$1"; }
keys_in_db="$(psql_q "SELECT count(*) FROM api_keys WHERE \"user\" = 'kube-play'")"
runs_in_db="$(psql_q "SELECT count(*) FROM audit_runs WHERE \"user\" = 'kube-play' AND kind = 'run_code' AND status = 'SUCCESS'")"
[ "$keys_in_db" = 1 ] && ((runs_in_db >= 3)) ||
  { echo "$name: PostgreSQL has $keys_in_db keys and $runs_in_db successful run_code runs of user kube-play (expected 1 and >= 3)" >&2; exit 1; }
log "PostgreSQL: the key, and $runs_in_db successful run_code runs of kube-play in audit_runs"

log "passed in $(( $(date +%s) - t0 )) s"
