#!/usr/bin/env bash
# The OAuth bench (oauth_bench.cc) with its JWKS refresh measured against a
# real provider: the e2e tests' oidc-provider (tests/e2e/oauth_idp.mjs, npm
# packages from scripts/setup.sh) on a free loopback port for the run.
#
#   bench/oauth_bench.sh [--rounds N]     (build/airlock_oauth_bench, or $AIRLOCK_OAUTH_BENCH)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
bench="${AIRLOCK_OAUTH_BENCH:-$repo/build/airlock_oauth_bench}"
out="$(mktemp)"
node --input-type=module -e "
  const { startIdp } = await import('$repo/tests/e2e/oauth_idp.mjs');
  const idp = await startIdp({ resource: 'http://127.0.0.1:1/mcp' });
  console.log(idp.issuer);
  process.on('SIGTERM', async () => { await idp.close(); process.exit(0); });
" >"$out" 2>/dev/null &
idp_pid=$!
trap 'kill "$idp_pid" 2>/dev/null || true; wait "$idp_pid" 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 100); do
  [[ -s "$out" ]] && break
  sleep 0.1
done
issuer="$(head -n1 "$out")"
[[ -n "$issuer" ]] || { echo "oauth_bench.sh: the provider did not start" >&2; exit 1; }
"$bench" --issuer "$issuer" "$@"
