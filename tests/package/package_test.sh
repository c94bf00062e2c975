#!/usr/bin/env bash
# The Debian package end to end (issue 19): build it with CPack, install it
# with dpkg on this machine, run `airlock doctor`, `airlock selftest` and an
# MCP SDK smoke test against /usr/bin/airlock, then `dpkg --purge` and check
# that nothing is left. Needs root and dpkg (exit 77, skipped, otherwise).
#   tests/package/package_test.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$here/build}"
if [ "$(id -u)" != 0 ] || ! command -v dpkg >/dev/null; then
  echo "package_test: needs root and dpkg; skipped" >&2
  exit 77
fi
if dpkg-query -W -f='${Status}' airlock 2>/dev/null | grep -q "ok installed"; then
  echo "package_test: airlock is already installed; purging it first" >&2
  dpkg --purge airlock >/dev/null
fi

cmake --build "$build" --target package >/dev/null
deb="$(ls "$build"/airlock_*_amd64.deb)"
echo "package_test: $deb ($(du -h "$deb" | cut -f1))"
files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print substr($6, 2)}')
for f in $files; do
  if [ -e "$f" ]; then echo "package_test: $f exists before installing" >&2; exit 1; fi
done

purge() { dpkg --purge airlock >/dev/null 2>&1 || true; }
trap purge EXIT
dpkg -i "$deb" >/dev/null
test -x /usr/bin/airlock && test -x /usr/lib/airlock/airlock-init
test "$(stat -c %a /var/lib/airlock)" = 700
zcat /usr/share/man/man1/airlock.1.gz | grep -q '^\.TH AIRLOCK'
# airlock(1) documents every subcommand's options (made by `airlock man` at build time).
python3 "$here/tests/docs/man_page_test.py" /usr/bin/airlock /usr/share/man/man1/airlock.1.gz
dpkg-query -W -f='${Conffiles}\n' airlock | grep -q /etc/airlock/airlock.json
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify --man=no /lib/systemd/system/airlock.service  # the unit parses, its binary exists
fi

# server.json (the MCP registry's format) names this version and the real command line.
node -e '
  const s = require("/usr/share/doc/airlock/server.json");
  const v = process.argv[1].trim();
  if (s.version !== v) throw new Error(`server.json version ${s.version}, airlock --version ${v}`);
  for (const p of s.packages) {
    const ok = p.registryType === "deb" ? p.version === v && p.identifier === "airlock"
             : p.registryType === "oci" && p.version === undefined && p.identifier.endsWith(":" + v);
    if (!ok) throw new Error("package entry: " + JSON.stringify(p));
    if (p.packageArguments[0].value !== "serve") throw new Error("first argument must be serve");
  }
  for (const type of ["deb", "oci"]) {
    const http = s.packages.find((p) => p.registryType === type && p.transport.type === "streamable-http");
    if (!http || !http.transport.url.endsWith("/mcp")) throw new Error(`no ${type} streamable-http form at /mcp`);
  }
' "$(/usr/bin/airlock --version)"
# The documentation: README.md with docs/ (screenshots included) beside it, as
# in the repo, so every relative link resolves; the test suite is not shipped.
python3 "$here/tests/docs/check_links.py" /usr/share/doc/airlock --skip-prefix tests/
/usr/bin/airlock serve --help | grep -q -- '--http'
/usr/bin/airlock doctor
/usr/bin/airlock selftest --json > "$build/package-selftest.json" || {
  echo "package_test: airlock selftest failed:" >&2; cat "$build/package-selftest.json" >&2; exit 1; }
echo "package_test: selftest passed"
(cd "$here/tests/e2e" && AIRLOCK_BIN=/usr/bin/airlock node --test --test-concurrency=1 ../package/smoke.mjs)

trap - EXIT
dpkg --purge airlock >/dev/null
left=""
for f in $files /etc/airlock /var/lib/airlock /usr/lib/airlock /usr/share/doc/airlock; do
  [ -e "$f" ] && left="$left $f"
done
if [ -n "$left" ]; then echo "package_test: left behind after purge:$left" >&2; exit 1; fi
echo "package_test: installed, used and purged; nothing left behind"
