#!/usr/bin/env bash
# airlock's test suite under sanitizers (docs/security.md, "How we test"):
#
#   tests/sanitize/run.sh asan [GTEST_FILTER]   ASan + UBSan: every unit,
#       jail and containment test (airlock_tests), then the SDK end-to-end
#       suite against the instrumented `airlock serve`
#   tests/sanitize/run.sh tsan [GTEST_FILTER]   TSan: the threaded parts
#       that run without a jail (bridge relay and frames, call queue, runner
#       loop, HTTP transport, its TLS listener and connection lobby, MCP
#       sessions in both protocol eras, subscriptions, the Tasks extension and
#       its stores, OAuth, console and its SSO, gateway and connectors, the
#       runner-host link over gRPC, the PostgreSQL stores, metrics, log relay)
#
# Each builds in its own directory (build/asan, build/tsan) with g++'s
# sanitizers. airlock-init and airlock-js, which run inside the jail under
# the run's limits, are not instrumented: the plain build's are linked in
# (CMakeLists.txt, AIRLOCK_SANITIZE). Any report fails the run.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
mode="${1:-}"
filter="${2:-}"

case "$mode" in
  asan)
    flags=address,undefined
    export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}"
    export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
    ;;
  tsan)
    flags=thread
    # ignore_noninstrumented_modules: Debian's gRPC, Abseil, libpq and
    # OpenSSL are not built with TSan, so their own locking (absl::Mutex,
    # futexes, atomics) is invisible and the libc calls they make (memmove in
    # absl's deadlock detector, epoll_wait on gRPC's poller) read as races
    # with each other. TSan's option for that case checks interceptors only
    # when called from instrumented code: every access airlock's own code
    # makes, on any thread (gRPC's included), is still checked.
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$here/tsan.supp:${TSAN_OPTIONS:-}"
    # The threaded parts that run without a jail. A jail cannot be built
    # under TSan (its runtime thread makes unshare(CLONE_NEWUSER) fail:
    # "user namespaces are unavailable"), and the runner-client tests fork
    # a fake runner without exec, which TSan does not support; so the jail
    # pool, the runner client with a live runner and code mode end to end
    # are covered by the ASan build and the soak instead.
    # The new fronts run here too: the modern era (McpModern*, ModernMeta*,
    # ModernSubscriptionHub*, ModernHeaders*, GatewayModern), the Tasks
    # extension and both task stores (McpTasks*, TaskStoreTest, TaskId*,
    # TaskPolicy*), HTTPS and OAuth (McpHttpTls*, HttpTlsConfig*, LobbyTest,
    # OAuth*, McpHttpOAuth*), console SSO, the runner host and its gateway
    # side over gRPC and mutual TLS with a fake executor (RemoteRunnerTest,
    # FrameCodecTest), and PostgreSQL (Pg*, the Backends/Backend store
    # suites, McpTasksPg*): each test process starts a throwaway server with
    # tests/pg/pg_server.sh (through popen, a fork with exec: fine).
    # Left out: PgAuditStoreTest.WritersInSeveralProcessesAndThreadsKeepOneChain
    # forks writer processes without exec (as the runner-client tests do);
    # PgCliTest.AuditVerifyOnPostgresAfterRunsThenNamesTheTamperedRow runs
    # code through the instrumented `airlock` binary, i.e. builds a jail.
    : "${filter:=BridgeRelayTest*:CodemodeCallQueue*:CodemodeFrames*:CodemodeBridge*:ConsoleApiTest*:ConsoleHttpTest*:ConsoleSessionsTest*:ConsoleSso*:SignInThrottle*:Gateway*:ModernHeaders*:JsonLogRelayTest*:LobbyTest*:McpHttp*:HttpTlsConfig*:McpModern*:ModernMeta*:ModernSubscriptionHub*:McpTasks*:TaskIdTest*:TaskPolicyTest*:*/TaskStoreTest.*:OAuth*:McpSessionTest*:McpStdioTest*:McpGovernance*:MetricsTest*:RateWindow*:RunTrackerTest*:RunnerFrameTest*:RunnerLoop*:SessionRegistryTest*:FrameCodecTest*:RemoteRunnerTest*:Pg*:*/PgAuditStoreTest.*:*/PgCodeToolStoreTest.*:*/AuditStoreTest.*:*/CodeToolStoreTest.*:*/KeyStoreTest.*-*/PgAuditStoreTest.WritersInSeveralProcessesAndThreadsKeepOneChain/*:PgCliTest.AuditVerifyOnPostgresAfterRunsThenNamesTheTamperedRow}"
    ;;
  *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac

out="$repo/build/$mode"
if [ ! -f "$out/build.ninja" ]; then
  cmake -S "$repo" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAIRLOCK_SANITIZE="$flags" >/dev/null
fi
[ -x "$repo/build/airlock-init" ] || { echo "sanitize: build the plain tree first (scripts/setup.sh): its airlock-init and airlock-js run in the jail" >&2; exit 2; }
cmake --build "$out" --target airlock airlock_tests

echo "sanitize[$mode]: airlock_tests ${filter:+--gtest_filter=$filter}" >&2
(cd "$out" && ./airlock_tests ${filter:+--gtest_filter="$filter"} --gtest_brief=1)

if [ "$mode" = asan ] && [ -z "$filter" ]; then
  echo "sanitize[$mode]: the SDK end-to-end suite against $out/airlock" >&2
  (cd "$repo/tests/e2e" && AIRLOCK_BIN="$out/airlock" npm test --silent)
fi
echo "sanitize[$mode]: passed" >&2
