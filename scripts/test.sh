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
AIRLOCK_FUZZ_BUILD="$here/build/fuzz" "$here/tests/fuzz/run.sh" build >/dev/null
cd "$here/build"
ctest --output-on-failure --timeout 600 -j1 "$@"
