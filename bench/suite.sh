#!/bin/sh
# The performance suite (bench/suite.mjs): latency per language over MCP
# stdio and HTTP, throughput, server memory, idle pooled jails, code mode,
# against bare interpreters and bubblewrap in the same run, and a closing
# "Targets" table. Flags: --runs N --only LANGS --no-http --json OUT
# --tput-runs N --config FILE --warm|--no-warm --warm-gap-ms MS
# --compile-runs K --no-codemode.
#
# First brings the build up to date (scripts/setup.sh: installs what is
# missing, builds; a no-op when nothing changed). AIRLOCK_BENCH_NO_SETUP=1
# skips that.
set -eu
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${AIRLOCK_BENCH_NO_SETUP:-}" ]; then
  "$here/scripts/setup.sh" >/dev/null
fi
exec node "$here/bench/suite.mjs" "$@"
