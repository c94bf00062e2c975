#!/usr/bin/env bash
# Installs the Debian 12 packages the WASM/WASI tier needs: clang-16 with
# wasm-ld, llvm-ar/llvm-ranlib, wasi-libc, the wasm32 compiler-rt builtins and
# libc++/libc++abi, and python3.11 (the build python for CPython's wasm build).
# Idempotent and quiet: when everything is installed it only runs dpkg-query.
#
#   sudo scripts/wasm/install_toolchain.sh
#
# Does not touch /usr/bin/python3 or whatever python3 comes first on PATH.
set -euo pipefail

PACKAGES=(
  clang-16 lld-16 llvm-16
  wasi-libc libclang-rt-16-dev-wasm32 libc++-16-dev-wasm32 libc++abi-16-dev-wasm32
  # CPython build: build python, source unpacking, make
  python3.11 dpkg-dev make xz-utils
)

need=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "wasm toolchain: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Fail loudly if a tool the other scripts rely on is missing.
for tool in clang-16 clang++-16 wasm-ld-16 llvm-ar-16 llvm-ranlib-16 /usr/bin/python3.11; do
  command -v "$tool" >/dev/null || { echo "wasm toolchain: $tool missing after install" >&2; exit 1; }
done
[ -f /usr/lib/wasm32-wasi/libc.a ] || { echo "wasm toolchain: wasi-libc not found in /usr/lib/wasm32-wasi" >&2; exit 1; }
