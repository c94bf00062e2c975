#!/usr/bin/env bash
# Installs everything, builds, and runs the whole test suite: unit and jail
# tests (GoogleTest), the containment self-test, the end-to-end tests that
# drive airlock through the official MCP TypeScript SDK client (fault
# injection among them), every fuzz target for a short time, the 500-run
# soak, and the Debian package under dpkg and under a real systemd.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
# The libFuzzer targets (clang-16 + ASan/UBSan, their own build directory);
# ctest runs each for a short fixed time.
# Its output is kept in a log and shown only when the build fails.
fuzz_log="$here/build/fuzz-build.log"
mkdir -p "$here/build"
if ! AIRLOCK_FUZZ_BUILD="$here/build/fuzz" "$here/tests/fuzz/run.sh" build >"$fuzz_log" 2>&1; then
  tail -n 60 "$fuzz_log" >&2
  echo "test.sh: the fuzz targets did not build (log: $fuzz_log)" >&2
  exit 1
fi
cd "$here/build"
ctest --output-on-failure --timeout 600 -j1 "$@"
