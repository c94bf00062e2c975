#!/usr/bin/env bash
# The airlock soak test: RUNS runs (default 10000) through MCP over HTTP at
# concurrency 8, then the leak and audit checks (tests/soak/README.md).
#
#   tests/soak/run.sh            # the full soak: 10 000 runs
#   tests/soak/run.sh 500        # the CI version
#   tests/soak/run.sh 200 --concurrency 4 --seed 7 --keep
#
# Exits 0 when every check passed, 1 when one failed, 2 when it could not run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

runs="${1:-10000}"
if [[ $# -gt 0 ]]; then shift; fi
if ! [[ "$runs" =~ ^[0-9]+$ ]] || [[ "$runs" -lt 1 ]]; then
  echo "usage: $0 [RUNS] [soak.mjs flags]" >&2
  exit 2
fi
for d in "$repo/tests/e2e/node_modules" "$repo/tests/fixtures/mcp-servers/node_modules"; do
  if [[ ! -d "$d" ]]; then
    echo "soak: $d is missing: run 'npm ci' in $(dirname "$d")" >&2
    exit 2
  fi
done
if [[ "$(id -u)" != 0 ]]; then
  echo "soak: note: not root; airlock needs user namespaces and a writable cgroup subtree" >&2
fi
exec node "$here/soak.mjs" --runs "$runs" "$@"
