#!/usr/bin/env bash
# airlock's libFuzzer targets (tests/fuzz/*_fuzz.cc), built with clang-16,
# ASan and UBSan in their own build directory ($AIRLOCK_FUZZ_BUILD, default
# build/fuzz):
#
#   tests/fuzz/run.sh build             configure and build every target
#   tests/fuzz/run.sh TARGET SECONDS    fuzz one target (e.g. tar_reader 3600)
#   tests/fuzz/run.sh all SECONDS       every target, one after the other
#   tests/fuzz/run.sh list              the targets
#
# Each target starts from its seed corpus (tests/fuzz/corpus/TARGET, made by
# tests/fuzz/make_corpus.py; crash reproducers found earlier live there too,
# so every run re-checks them) and writes what it discovers to
# $AIRLOCK_FUZZ_BUILD/corpus/TARGET. A crash leaves its input in
# $AIRLOCK_FUZZ_BUILD/crashes/TARGET/ and makes this script fail. The last
# line per target is a summary: executions, execs/s, edges covered.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${AIRLOCK_FUZZ_BUILD:-$repo/build/fuzz}"

targets() { sed -n '/^set(AIRLOCK_FUZZ_TARGETS$/,/)/p' "$here/CMakeLists.txt" | tr -d '()' | tr ' ' '\n' |
  grep -v -e '^set' -e '^$'; }

build() {
  if [ ! -f "$out/build.ninja" ]; then
    # -O1 with line tables only: what fuzzing wants (fast code, symbolized
    # stacks), and about half the compile time of -O2 -g.
    CC=clang-16 CXX=clang++-16 cmake -S "$repo" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Fuzz \
      -DCMAKE_C_FLAGS="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
      -DAIRLOCK_FUZZ=ON -DAIRLOCK_SANITIZE=address,undefined >/dev/null
  fi
  # AIRLOCK_FUZZ_JOBS: compile jobs (ninja's default otherwise); the ctest
  # fixture fuzz_build uses 2 beside the other tests.
  cmake --build "$out" --target fuzz_all ${AIRLOCK_FUZZ_JOBS:+--parallel "$AIRLOCK_FUZZ_JOBS"}
}

dict_for() {
  case "$1" in
    jsonrpc_stdio | bridge_frames | json_schema | config_loader | code_tool_hash) echo "$here/dict/json.dict" ;;
    http_request) echo "$here/dict/http.dict" ;;
    sse_parser) echo "$here/dict/sse.dict" ;;
    *) echo "" ;;
  esac
}

fuzz_one() {
  local t="$1" seconds="$2"
  local bin="$out/tests/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: $bin is not built (tests/fuzz/run.sh build)" >&2; return 1; }
  mkdir -p "$out/corpus/$t" "$out/crashes/$t" "$here/corpus/$t"
  local dict args=()
  dict="$(dict_for "$t")"
  [ -n "$dict" ] && args+=("-dict=$dict")
  local log="$out/fuzz_$t.log"
  # detect_leaks: a target's fixtures (server, gateway) live for the whole
  # process on purpose; everything an input allocates is freed or ASan's
  # heap checks see it used after free.
  set +e
  ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}" \
    "$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/$t/" "${args[@]}" "$out/corpus/$t" "$here/corpus/$t" >"$log" 2>&1
  local rc=$?
  set -e
  local done_line execs rate
  done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)"
  execs="$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)"
  rate="$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}' || true)"
  local cov ft
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")"
  printf 'fuzz %-15s %5ss  execs %-9s exec/s %-7s edges %-6s features %-6s corpus %s  %s\n' "$t" "$seconds" \
    "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$(ls "$out/corpus/$t" | wc -l)+$(ls "$here/corpus/$t" | wc -l)" \
    "$([ $rc -eq 0 ] && echo ok || echo "FAILED (rc $rc, log $log)")"
  if [ $rc -ne 0 ]; then
    grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==' "$log" | head -20 >&2 || true
    ls "$out/crashes/$t" >&2 || true
  fi
  return $rc
}

case "${1:-}" in
  build) build ;;
  list) targets ;;
  all)
    build >/dev/null
    status=0
    for t in $(targets); do fuzz_one "$t" "${2:?seconds}" || status=1; done
    exit $status
    ;;
  "" | -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  *)
    targets | grep -qx "$1" || { echo "fuzz: unknown target $1 (tests/fuzz/run.sh list)" >&2; exit 2; }
    [ -x "$out/tests/fuzz/fuzz_$1" ] || build >/dev/null
    fuzz_one "$1" "${2:?seconds}"
    ;;
esac
