#!/usr/bin/env bash
# Installs everything, builds, and runs the whole test suite: unit and jail
# tests (GoogleTest), the containment self-test, and the end-to-end tests
# that drive airlock through the official MCP TypeScript SDK client.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
cd "$here/build"
ctest --output-on-failure --timeout 600 -j1 "$@"
