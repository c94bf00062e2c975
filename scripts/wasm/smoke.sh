#!/usr/bin/env bash
# Smoke check of the WASM/WASI toolchain and the cached CPython build:
#   1. compiles hello.c (clang-16) and hello.cpp with <iostream> (clang++-16,
#      libc++) to wasm32-wasi with Debian's wasi-libc layout (--sysroot=/usr),
#   2. checks each output starts with the wasm magic "\0asm" and lists its
#      imports (parsed from the import section),
#   3. if node is available, runs them and python.wasm under node:wasi (only a
#      verification aid: airlock itself runs wasm in its own host).
#
#   scripts/wasm/smoke.sh                        # uses the default cache
#   AIRLOCK_WASM_CACHE=/tmp/c scripts/wasm/smoke.sh
#   SMOKE_SKIP_PYTHON=1 scripts/wasm/smoke.sh    # toolchain only
# Exits non-zero on the first failed check.
set -euo pipefail

CACHE_ROOT="${AIRLOCK_WASM_CACHE:-/var/cache/airlock/wasm}"
PY_DIR="${AIRLOCK_WASM_PYTHON_DIR:-$CACHE_ROOT/python}"
# Debian layout: wasi-libc in /usr/{include,lib}/wasm32-wasi, libc++ headers
# and archives under /usr/lib/llvm-16, compiler-rt in clang's resource dir.
WASM_CFLAGS=(--target=wasm32-wasi --sysroot=/usr -O2)
WASM_CXXFLAGS=("${WASM_CFLAGS[@]}" -nostdinc++ -isystem /usr/lib/llvm-16/include/wasm32-wasi/c++/v1
               -fno-exceptions -L/usr/lib/llvm-16/lib/wasm32-wasi)

tmp="$(mktemp -d "${TMPDIR:-/tmp}/airlock-wasm-smoke.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
ok() { echo "smoke: ok   $*"; }
bad() { echo "smoke: FAIL $*" >&2; exit 1; }

cat >"$tmp/hello.c" <<'C'
#include <stdio.h>
int main(void) { printf("hello from c on %s\n", "wasm32-wasi"); return 0; }
C
cat >"$tmp/hello.cpp" <<'CPP'
#include <iostream>
#include <string>
#include <vector>
int main() {
  std::vector<std::string> words{"hello", "from", "c++"};
  for (const auto& w : words) std::cout << w << ' ';
  std::cout << std::endl;
  return 0;
}
CPP

clang-16 "${WASM_CFLAGS[@]}" "$tmp/hello.c" -o "$tmp/hello_c.wasm" 2>"$tmp/cc.err" ||
  { cat "$tmp/cc.err" >&2; bad "clang-16 hello.c"; }
ok "clang-16 hello.c -> hello_c.wasm ($(stat -c %s "$tmp/hello_c.wasm") bytes)"
clang++-16 "${WASM_CXXFLAGS[@]}" "$tmp/hello.cpp" -o "$tmp/hello_cpp.wasm" 2>"$tmp/cxx.err" ||
  { cat "$tmp/cxx.err" >&2; bad "clang++-16 hello.cpp"; }
ok "clang++-16 hello.cpp -> hello_cpp.wasm ($(stat -c %s "$tmp/hello_cpp.wasm") bytes)"

# Magic bytes + import section, with no dependency beyond the python stdlib.
wasm_imports() {
  python3 - "$1" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
if data[:4] != b"\0asm" or data[4:8] != b"\x01\0\0\0":
    sys.exit(f"{sys.argv[1]}: not a wasm module (magic {data[:8]!r})")
def leb(pos):
    result = shift = 0
    while True:
        b = data[pos]; pos += 1
        result |= (b & 0x7F) << shift; shift += 7
        if not b & 0x80:
            return result, pos
def name(pos):
    n, pos = leb(pos)
    return data[pos:pos + n].decode(), pos + n
pos, imports = 8, []
while pos < len(data):
    sid = data[pos]; size, pos = leb(pos + 1); end = pos + size
    if sid == 2:
        count, p = leb(pos)
        for _ in range(count):
            mod, p = name(p); field, p = name(p)
            kind = data[p]; p += 1
            if kind == 0: p = leb(p)[1]            # func: type index
            elif kind in (1, 2):                    # table: reftype + limits; memory: limits
                if kind == 1: p += 1
                flags, p = leb(p); p = leb(p)[1]
                if flags & 1: p = leb(p)[1]
            elif kind == 3: p += 2                  # global: valtype + mutability
            else: sys.exit(f"{sys.argv[1]}: unknown import kind {kind}")
            imports.append(f"{mod}.{field}")
    pos = end
print(" ".join(sorted(set(imports))))
PY
}
for m in hello_c hello_cpp; do
  imports="$(wasm_imports "$tmp/$m.wasm")" || bad "$m.wasm is not a wasm module"
  ok "$m.wasm magic \\0asm, imports: $imports"
  case " $imports " in *" wasi_snapshot_preview1."*) ;; *) bad "$m.wasm imports no WASI functions";; esac
done

py_wasm="$PY_DIR/python.wasm"
py_tar="$PY_DIR/python-stdlib.tar"
if [ -z "${SMOKE_SKIP_PYTHON:-}" ]; then
  [ -f "$py_wasm" ] && [ -f "$py_tar" ] || bad "no python build in $PY_DIR (run scripts/wasm/build_python.sh)"
  imports="$(wasm_imports "$py_wasm")" || bad "python.wasm is not a wasm module"
  ok "python.wasm magic \\0asm ($(stat -c %s "$py_wasm") bytes), $(wc -w <<<"$imports") imports, all from: $(tr ' ' '\n' <<<"$imports" | cut -d. -f1 | sort -u | tr '\n' ' ')"
  mkdir -p "$tmp/root"
  tar -xf "$py_tar" -C "$tmp/root"
  [ -f "$tmp/root/lib/python3.11/os.py" ] || bad "python-stdlib.tar lacks lib/python3.11/os.py"
  ok "python-stdlib.tar ($(stat -c %s "$py_tar") bytes) has lib/python3.11/os.py"
fi

if ! command -v node >/dev/null; then
  echo "smoke: skip running modules (no node)"; exit 0
fi
# Runs a WASI module under node:wasi: run.js <module> <preopen-dir|-> [args...]
cat >"$tmp/run.js" <<'JS'
const { WASI } = require("node:wasi");
const fs = require("node:fs");
const [file, root, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: "preview1",
  args: [file.split("/").pop(), ...args],
  env: {},
  preopens: root === "-" ? {} : { "/": root },
});
const mod = new WebAssembly.Module(fs.readFileSync(file));
const inst = new WebAssembly.Instance(mod, wasi.getImportObject());
process.exitCode = wasi.start(inst);
JS
run() { node --experimental-wasi-unstable-preview1 --no-warnings "$tmp/run.js" "$@"; }

out="$(run "$tmp/hello_c.wasm" -)" || bad "node: hello_c.wasm exited non-zero"
[ "$out" = "hello from c on wasm32-wasi" ] || bad "hello_c.wasm printed '$out'"
ok "node runs hello_c.wasm: $out"
out="$(run "$tmp/hello_cpp.wasm" -)" || bad "node: hello_cpp.wasm exited non-zero"
[ "$out" = "hello from c++ " ] || bad "hello_cpp.wasm printed '$out'"
ok "node runs hello_cpp.wasm: $out"

if [ -z "${SMOKE_SKIP_PYTHON:-}" ]; then
  code="import json, re, math, sys; print(json.dumps({'x': math.pi, 're': re.sub(r'\\d+', '#', 'a1b22'), 'v': sys.version.split()[0], 'platform': sys.platform}))"
  out="$(run "$py_wasm" "$tmp/root" -c "$code" 2>"$tmp/py.err")" ||
    { cat "$tmp/py.err" >&2; bad "node: python.wasm exited non-zero"; }
  want='{"x": 3.141592653589793, "re": "a#b#", "v": "3.11.2", "platform": "wasi"}'
  [ "$out" = "$want" ] || { cat "$tmp/py.err" >&2; bad "python.wasm printed '$out'"; }
  ok "node runs python.wasm -c 'import json, re, math ...': $out"
fi
echo "smoke: all checks passed"
