#!/usr/bin/env bash
# Hello world per language in each isolation tier, through `airlock run`
# (one jail per run, no warm pool), measured with hyperfine in one session so
# the tiers see the same machine. Compiled languages include their compile
# step (gcc/g++ natively, clang-16 to wasm32-wasi in the WASM tier).
#
#   bench/tiers_bench.sh [RUNS]        (default 15; needs hyperfine, scripts/setup.sh installs it)
#
# Prints hyperfine's table (mean ± σ, min…max) and a summary of medians with
# the WASM/native ratio. Not a test: it asserts nothing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AIRLOCK="${AIRLOCK_BIN:-$here/build/airlock}"
RUNS="${1:-15}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/hello.js" <<'JS'
console.log("hello, world");
JS
cat >"$tmp/hello.c" <<'C'
#include <stdio.h>
int main(void) { puts("hello, world"); return 0; }
C
cat >"$tmp/hello.cpp" <<'CPP'
#include <iostream>
int main() { std::cout << "hello, world" << std::endl; }
CPP

cat >"$tmp/hello.py" <<'PY'
print("hello, world")
PY
cat >"$tmp/hello.rb" <<'RB'
puts "hello, world"
RB

declare -A src=([javascript]=hello.js [c]=hello.c [cpp]=hello.cpp [python]=hello.py [ruby]=hello.rb)
langs=(javascript c cpp)
# Python's and Ruby's WASM tier need their cached builds (scripts/wasm/).
cache="${AIRLOCK_WASM_CACHE:-/var/cache/airlock/wasm}"
[ -f "$cache/python/python.wasm" ] && langs+=(python)
[ -f "$cache/ruby/ruby.wasm" ] && langs+=(ruby)
json="$tmp/results.json"
cmds=()
for lang in "${langs[@]}"; do
  for tier in native wasm; do
    cmds+=(-n "$lang/$tier" "$AIRLOCK run --lang $lang --isolation $tier $tmp/${src[$lang]}")
  done
done
hyperfine --warmup 2 --runs "$RUNS" --style basic --export-json "$json" "${cmds[@]}" >&2
python3 - "$json" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
print("| language | native median ms | wasm median ms | wasm / native |")
print("|---|---|---|---|")
for lang in ["javascript", "c", "cpp", "python", "ruby"]:
    if f"{lang}/native" not in res:
        continue
    n = res[f"{lang}/native"]["median"] * 1000
    w = res[f"{lang}/wasm"]["median"] * 1000
    print(f"| {lang} | {n:.1f} | {w:.1f} | {w / n:.2f}x |")
PY
