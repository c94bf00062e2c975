#!/usr/bin/env bash
# Installs everything, builds, and runs the whole test suite: unit and jail
# tests (GoogleTest), the containment self-test, the end-to-end tests that
# drive airlock through the official MCP TypeScript SDK client (fault
# injection among them), every fuzz target for a short time, the 500-run
# soak, and the Debian package under dpkg and under a real systemd.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Wall time per phase (docs/testing.md, "Where the minutes go"), printed at
# the end whether the run passed or not.
mkdir -p "$here/build"
export AIRLOCK_PHASE_LOG="$here/build/phase-times.tsv"
: >"$AIRLOCK_PHASE_LOG"
run_start=$SECONDS
phase_table() {
  local rc=$?
  {
    echo "test.sh: wall time per phase"
    awk -F'\t' '{printf "  %-34s %5d s\n", $1, $2}' "$AIRLOCK_PHASE_LOG"
    printf '  %-34s %5d s\n' "total" $((SECONDS - run_start))
  } >&2
  return $rc
}
trap phase_table EXIT
"$here/scripts/setup.sh"
# Three tests at a time on two cores: most tests wait on processes, jails,
# sockets or sleeps rather than compute; the libFuzzer targets are built by
# the ctest fixture fuzz_build (niced) beside them. Tests that must have the machine
# to themselves (the soak, the package and the OCI image, which mount and
# install on the host) are RUN_SERIAL in CMakeLists.txt. AIRLOCK_TEST_JOBS
# overrides (1 = the old one-at-a-time run). docs/testing.md has the profile.
cd "$here/build"
phase_at=$SECONDS
set +e
ctest --output-on-failure --timeout 600 -j "${AIRLOCK_TEST_JOBS:-3}" --output-junit "$here/build/ctest-junit.xml" "$@"
rc=$?
set -e
printf '%s\t%s\n' "ctest" $((SECONDS - phase_at)) >>"$AIRLOCK_PHASE_LOG"
# Inside ctest: the fuzz build (fixture fuzz_build) and the longest tests.
python3 - "$here/build/ctest-junit.xml" >>"$AIRLOCK_PHASE_LOG" 2>/dev/null <<'PY' || true
import sys, xml.etree.ElementTree as ET
cases = sorted(((float(c.get("time", 0)), c.get("name")) for c in ET.parse(sys.argv[1]).getroot().iter("testcase")), reverse=True)
for t, n in cases[:6]:
    print(f"  ctest: {n}\t{round(t)}")
PY
exit $rc
