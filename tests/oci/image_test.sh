#!/usr/bin/env bash
# The OCI image end to end (issue 33): build it with packaging/oci/build.sh
# (cached: reused while the .deb and build.sh are unchanged), then under
# podman: its labels and users, `airlock doctor` (every layer) and
# `airlock selftest` (must pass) inside it with the documented least
# privileges, each of those privileges shown necessary, doctor and selftest
# under `--cpus 0.5` (cgroup v1: jails clamped to it), the MCP SDK client
# over `podman run -i ... serve` (every language, native and WASM, escape
# probes) and over `serve --http` with a published port.
# Exit 77 (skipped) only where podman cannot run here.
#   tests/oci/image_test.sh BUILD_DIR
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
skip() { echo "oci_image: $*; skipped" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap --mode=root, rootful podman)"
for t in podman mmdebstrap runc node curl; do command -v "$t" >/dev/null || skip "$t is missing (scripts/setup.sh installs it)"; done
podman info >/dev/null 2>&1 || skip "podman info fails: podman cannot run on this host"

start=$(date +%s)
# The image, built or reused (cache key: the .deb and build.sh), under the
# name build.sh gives by default: server.json's OCI package identifier.
# shellcheck source=tests/oci/lib.sh
. "$repo/tests/oci/lib.sh"
oci_image_ready "$build" oci_image  # OCI_DEB, OCI_VERSION, OCI_IMAGE
version="$OCI_VERSION"
image="$OCI_IMAGE"
echo "oci_image: image $(podman image inspect --format '{{.Size}}' "$image") bytes"

label="airlock-oci-test-$$"
tmp="$(mktemp -d /tmp/airlock-oci-test.XXXXXX)"
cleanup() {
  podman ps -aq --filter "label=$label" | xargs -r podman rm -f -t 2 >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# The labels the MCP registry and OCI tooling read.
lbl() { podman image inspect --format "{{index .Labels \"$1\"}}" "$image"; }
server_name="$(node -p 'require(process.argv[1]).name' "$repo/server.json")"
[ "$(lbl io.modelcontextprotocol.server.name)" = "$server_name" ]
[ "$(lbl org.opencontainers.image.version)" = "$version" ]
[ -n "$(lbl org.opencontainers.image.source)" ] && [ -n "$(lbl org.opencontainers.image.licenses)" ]
[ "$(podman image inspect --format '{{json .Config.Entrypoint}}{{json .Config.Cmd}}' "$image")" = '["/usr/bin/tini","--","/usr/bin/airlock"]["serve"]' ]

# runc (crun refuses hybrid cgroup v1 hosts); ulimits within what this
# (possibly nested) root may set; then the least privileges (docs/deploy.md).
base=(podman run --rm --runtime runc --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096
      --label "$label" -e AIRLOCK_OCI_SECRET=oci-secret-marker)
least=(--security-opt seccomp=unconfined --security-opt 'unmask=/proc/*' -v /sys/fs/cgroup:/sys/fs/cgroup:rw)

# The gateway's non-root user exists and runs airlock.
[ "$("${base[@]}" --user airlock --entrypoint id "$image" -u)" = 65532 ]
"${base[@]}" --user airlock "$image" --version | grep -q "$version"

"${base[@]}" "${least[@]}" "$image" doctor | tee "$tmp/doctor"
grep -q "every isolation layer active" "$tmp/doctor"
grep -q "WASM tier: python interpreter *active" "$tmp/doctor"
grep -q "WASM tier: ruby interpreter *active" "$tmp/doctor"
grep -q "WASM tier: php interpreter *active" "$tmp/doctor"

# Each of the three is needed: without it doctor refuses.
for drop in 0 2 4; do
  fewer=("${least[@]:0:$drop}" "${least[@]:$((drop + 2))}")
  if "${base[@]}" "${fewer[@]}" "$image" doctor >"$tmp/doctor-fewer" 2>&1 || true; then :; fi
  if ! grep -q "airlock will refuse to run code" "$tmp/doctor-fewer"; then
    echo "oci_image: doctor accepts the host without '${least[*]:$drop:2}': the documented least privileges are not least" >&2
    exit 1
  fi
done

if ! "${base[@]}" "${least[@]}" "$image" selftest >"$tmp/selftest" 2>&1; then
  cat "$tmp/selftest" >&2
  echo "oci_image: selftest failed inside the container" >&2
  exit 1
fi
tail -2 "$tmp/selftest"

# Under a CPU limit (--cpus: on cgroup v1 a cfs quota on the container's
# cgroup) the kernel refuses any jail quota above it; airlock clamps each
# jail's quota to it, and doctor says so. selftest runs jails asking for
# more than 0.5 CPU (one core by default).
if [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
  "${base[@]}" "${least[@]}" --cpus 0.5 "$image" doctor >"$tmp/doctor-cpus"
  grep -q "cpu: parent quota 0.5 CPUs" "$tmp/doctor-cpus" || {
    cat "$tmp/doctor-cpus" >&2; echo "oci_image: doctor does not report the --cpus 0.5 quota" >&2; exit 1; }
  if ! "${base[@]}" "${least[@]}" --cpus 0.5 "$image" selftest >"$tmp/selftest-cpus" 2>&1; then
    cat "$tmp/selftest-cpus" >&2
    echo "oci_image: selftest failed under --cpus 0.5" >&2
    exit 1
  fi
  echo "oci_image: under --cpus 0.5: $(tail -1 "$tmp/selftest-cpus")"
fi

# Streamable HTTP on a published port.
port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
"${base[@]}" -d "${least[@]}" -p "127.0.0.1:$port:8787" "$image" serve --http 0.0.0.0:8787 >/dev/null
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null

run_json="$(node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- "${base[@]:0:2}" -i "${base[@]:2}" "${least[@]}" "$image")"
AIRLOCK_OCI_RUN="$run_json" AIRLOCK_OCI_HTTP="http://127.0.0.1:$port/mcp" \
  node --test --test-concurrency=1 "$repo/tests/oci/smoke.mjs"
echo "oci_image: passed in $(( $(date +%s) - start )) s"
