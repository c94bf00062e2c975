#!/usr/bin/env bash
# Installs every Debian and npm dependency airlock needs, then builds it.
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

# Each phase's wall time goes to stderr and to $AIRLOCK_PHASE_LOG (when set;
# scripts/test.sh sets it and prints the table at the end).
phase_start=$SECONDS
phase() {
  local took=$((SECONDS - phase_start))
  echo "setup: $1 took ${took} s" >&2
  [ -n "${AIRLOCK_PHASE_LOG:-}" ] && printf '%s\t%s\n' "$1" "$took" >>"$AIRLOCK_PHASE_LOG"
  phase_start=$SECONDS
}

DEB_PACKAGES=(
  # toolchain and build
  build-essential cmake ninja-build pkg-config
  # libraries
  libseccomp-dev nlohmann-json3-dev libcpp-httplib-dev libcli11-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # scale-out: gRPC runner hosts (mutual TLS), PostgreSQL shared state
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libpqxx-dev postgresql-15 openssl
  # the embedded JavaScript engine (code mode, WASM tier)
  libmozjs-102-dev
  # language runtimes for the native tier
  python3 python3-numpy python3-pandas python3-matplotlib
  nodejs esbuild ruby php-cli bash coreutils
  # baselines for bench/
  bubblewrap hyperfine
  # misc used by tests
  iproute2 procps util-linux curl
  # the operators' console's browser tests (npm playwright-core drives it)
  chromium
  # a real Prometheus parser for the /metrics test
  python3-prometheus-client
  # the Debian package: dpkg-shlibdeps (its Depends); groff-base checks the
  # man page `airlock man` renders (tests/docs/man_page_test.py)
  dpkg-dev groff-base
  # the Kubernetes manifests test parses YAML
  python3-yaml
  # OAuth access tokens (src/auth/oauth): cjose imports the issuer's JWKS and
  # verifies JWS signatures (libjwt 1.10 has no JWKS)
  libcjose-dev libjansson-dev
  # fuzzing and sanitizer builds (tests/fuzz/run.sh): clang-16's libFuzzer,
  # ASan, UBSan and TSan runtimes
  clang-16 libclang-rt-16-dev
  # the OCI image (packaging/oci/build.sh, tests/oci/image_test.sh): a Debian
  # root by mmdebstrap, imported and run by podman with runc (crun refuses
  # hybrid cgroup v1 hosts); buildah for those who prefer it to podman import;
  # catatonit for `podman kube play` (its pods' infra image is built around
  # it: tests/oci/kube_play_test.sh)
  mmdebstrap podman runc buildah catatonit
)

need=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "setup: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
phase "install (Debian packages)"

# The WASM tier's toolchain (clang-16, wasm-ld, wasi-libc, libc++ for wasm32)
# and its interpreters, cached outside the clone ($AIRLOCK_WASM_CACHE,
# default /var/cache/airlock/wasm) keyed by version: CPython built from
# Debian's python3.11 source (a few minutes, once), PHP 8.2 built from
# Debian's php8.2 source (about 4 minutes, once) and Ruby's WASI build.
scripts/wasm/install_toolchain.sh
scripts/wasm/build_python.sh
scripts/wasm/build_php.sh
scripts/wasm/install_ruby.sh
phase "WASM toolchain and interpreters"

# npm packages for the end-to-end tests (official MCP SDK client, conformance
# suite, inspector-cli) and the downstream MCP servers used as fixtures.
for dir in tests/e2e tests/fixtures/mcp-servers; do
  [ -f "$dir/package.json" ] || continue
  stamp="$dir/node_modules/.airlock-installed"
  if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ] || [ "$dir/package.json" -nt "$stamp" ]; then
    echo "setup: npm ci in $dir" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.airlock-installed)
  fi
done
phase "install (npm)"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
phase "build"
