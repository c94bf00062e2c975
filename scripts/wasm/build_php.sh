#!/usr/bin/env bash
# Builds PHP 8.2's CLI for wasm32-wasi from Debian's php8.2 source package
# with Debian's clang-16 + wasi-libc, and caches the result outside the clone:
#
#   $AIRLOCK_WASM_CACHE (default /var/cache/airlock/wasm)/php-<debian-version>-r<recipe>/
#     php.wasm      the CLI (WASI preview1 command module; no files needed:
#                   no php.ini, extensions built in)
#     MANIFEST      key=value: VERSION, RECIPE, sha256 of php.wasm, flags,
#                   extensions
#     build.log
#   $AIRLOCK_WASM_CACHE/php -> php-<debian-version>-r<recipe>   (latest build)
#
# Usage (as root; run scripts/wasm/install_toolchain.sh first):
#   scripts/wasm/build_php.sh            # build unless cached
#   AIRLOCK_WASM_CACHE=/tmp/c scripts/wasm/build_php.sh
#   PHP_DEB_VERSION=8.2.32-1~deb12u1 scripts/wasm/build_php.sh
# Run it:  airlock-js --wasi php.wasm --work DIR=/work -- php main.php ARGS
#
# A complete cached build (MANIFEST present, hash matches) makes this a no-op.
# The build runs in a temporary dir and is renamed into place, so an
# interrupted run never leaves a half-filled cache dir. The cache key is the
# Debian version plus RECIPE_REV: bump RECIPE_REV whenever this script or
# scripts/wasm/php/* change what gets built.
#
# Extensions: core, date, hash, json, pcre (bundled PCRE2, no JIT), random,
# reflection, spl, standard, plus bcmath, calendar, ctype, filter, mbstring
# (no mbregex: no oniguruma) and tokenizer. No opcache, sockets, posix,
# pcntl, session, phar; no dom/simplexml/xml (they need libxml2 built for
# wasm32-wasi first; not done).
#
# setjmp/longjmp (the Zend engine's bailout: fatal errors, exit(), uncaught
# exceptions): wasi-libc has none. Decided by experiment, in this order:
#  1. WebAssembly exception handling. clang-16 `-mllvm -wasm-enable-sjlj`
#     lowers setjmp/longjmp to wasm EH (try/catch/throw of the C longjmp tag)
#     plus four runtime helpers (saveSetjmp, testSetjmp, getTempRet0,
#     __wasm_longjmp), which the WASM tier's setjmp kit implements
#     (src/runtimes/wasm_setjmp/setjmp.{h,c}, linked here as it is into C
#     programs). SpiderMonkey 102 as
#     airlock-js embeds it has wasm exceptions on by default (a "tentative"
#     feature, ENABLE_WASM_EXCEPTIONS in mozjs-102's js-config.h), and a test
#     program that longjmps out of 4 nested frames and loops on one setjmp
#     ran correctly under `airlock-js --wasi` (and node:wasi). Chosen: no
#     extra tools, no code-size blow-up, and the same code as the C tier.
#  2. Binaryen's Asyncify (as ruby.wasm does) was not needed; it would add a
#     post-link wasm-opt pass and grow the module and slow it down.
# Other WASI gaps (users, permissions, processes, sockets, syslog, mkstemp)
# are stubs in php/wasi_compat.c behind php/include/ (force-included
# airlock_wasi_compat.h, plus netdb.h, pwd.h, grp.h, syslog.h);
# php/php-8.2-wasi.patch makes zend_alloc take its 2 MiB chunks from the C
# heap (no mmap), refuses Fibers with an exception (no stack switching) and
# fixes a duplicate case (S_IFSOCK == S_IFIFO in wasi-libc). Everything in
# php/ is our own. Bump RECIPE_REV when these or the setjmp kit change.
set -euo pipefail

CACHE_ROOT="${AIRLOCK_WASM_CACHE:-/var/cache/airlock/wasm}"
SRC_PKG=php8.2
RECIPE_REV=5
KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")/php" && pwd)"
SJLJ="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../src/runtimes/wasm_setjmp" && pwd)"
WASI_EMULATION="-D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS -D_WASI_EMULATED_GETPID -D_WASI_EMULATED_MMAN"
WASI_EMULATION_LIBS="-lwasi-emulated-signal -lwasi-emulated-process-clocks -lwasi-emulated-getpid -lwasi-emulated-mman"
# 8 MiB shadow stack placed first, so an overflow traps instead of
# overwriting static data.
WASM_LDFLAGS="-Wl,-z,stack-size=8388608 -Wl,--stack-first"
CONFIGURE_FLAGS="--host=wasm32-unknown-wasi --prefix=/ --disable-all --enable-cli --disable-cgi
  --disable-phpdbg --without-pear --disable-opcache --disable-fiber-asm --disable-zend-signals
  --without-valgrind --without-pcre-jit --enable-bcmath --enable-calendar --enable-ctype --enable-filter
  --enable-mbstring --disable-mbregex --enable-tokenizer"
# What configure cannot find out by linking: getrusage() exists but its
# struct has only the times; flock() and mkstemp() come from wasi_compat.c.
CONFIGURE_CACHE="ac_cv_func_getrusage=no ac_cv_func_flock=yes ac_cv_func_mkstemp=yes"

say() { echo "build_php: $*" >&2; }
die() { say "error: $*"; exit 1; }
# shellcheck source=scripts/wasm/lib_deb_build.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_deb_build.sh"

for tool in clang-16 wasm-ld-16 llvm-ar-16 llvm-ranlib-16 llvm-nm-16 make patch dpkg-source; do
  command -v "$tool" >/dev/null || die "$tool missing; run scripts/wasm/install_toolchain.sh"
done
for f in "$KIT"/{wasi_compat.c,php-8.2-wasi.patch,include/airlock_wasi_compat.h} "$SJLJ"/setjmp.{c,h}; do
  [ -f "$f" ] || die "missing $f"
done

# Checks a cache dir: MANIFEST present and the hash matches.
cache_complete() {
  local dir="$1" want got
  [ -f "$dir/MANIFEST" ] && [ -f "$dir/php.wasm" ] || return 1
  want="$(sed -n 's/^SHA256_php_wasm=//p' "$dir/MANIFEST")"
  got="$(sha256sum "$dir/php.wasm" | cut -d' ' -f1)"
  [ -n "$want" ] && [ "$want" = "$got" ]
}

# --- which Debian source version ------------------------------------------
if [ -n "${PHP_DEB_VERSION:-}" ]; then
  candidates=("$PHP_DEB_VERSION")
else
  ensure_deb_src
  mapfile -t candidates < <(source_versions)
  ((${#candidates[@]})) || die "apt knows no source package $SRC_PKG"
fi

entry() { echo "php-$1-r$RECIPE_REV"; }
use_cached() {
  ln -sfn "$(entry "$1")" "$CACHE_ROOT/php"
  say "cached: $CACHE_ROOT/$(entry "$1") (php.wasm $(du -h "$CACHE_ROOT/$(entry "$1")/php.wasm" | cut -f1))"
  exit 0
}

# A version whose files the mirror did not serve is not retried for a day
# (mirrors can list a security update before they carry its files).
unfetchable() { [ -n "$(find "$CACHE_ROOT/.unfetchable-php-$1" -mmin -1440 2>/dev/null)" ]; }

# Fast path: the newest fetchable source version is already cached.
mkdir -p "$CACHE_ROOT"
for v in "${candidates[@]}"; do
  unfetchable "$v" && [ "$v" != "${candidates[-1]}" ] && continue
  if cache_complete "$CACHE_ROOT/$(entry "$v")"; then use_cached "$v"; fi
  break
done

# --- build -----------------------------------------------------------------
begin_build php

# apt-get source: the newest version whose files can actually be fetched (a
# mirror may lag behind its index); an older version already cached wins over
# downloading it again.
version=""
for v in "${candidates[@]}"; do
  if cache_complete "$CACHE_ROOT/$(entry "$v")"; then use_cached "$v"; fi
  unfetchable "$v" && [ "$v" != "${candidates[-1]}" ] && continue
  say "fetching source $SRC_PKG=$v"
  if (cd "$work" && apt-get source -qq "$SRC_PKG=$v") >>"$log" 2>&1; then
    rm -f "$CACHE_ROOT/.unfetchable-php-$v"; version="$v"; break
  fi
  touch "$CACHE_ROOT/.unfetchable-php-$v"
  rm -rf "${work:?}"/*
done
[ -n "$version" ] || fail "apt-get source $SRC_PKG"
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name "${SRC_PKG}-*" | head -n1)"
# The release tarball's generated configure and parsers are used as they are
# (no autoconf, bison or re2c needed).
if [ ! -f "$src/configure" ] || [ ! -f "$src/Zend/zend_language_parser.c" ]; then
  fail "no generated configure/parser in the source"
fi
upstream="${version%%-*}"

# Our changes: the patch, and configure accepting a platform without fibers
# (zend_fibers.c then throws on Fiber::start; see the patch).
(cd "$src" && patch -p1 --forward --no-backup-if-mismatch <"$KIT/php-8.2-wasi.patch") >>"$log" 2>&1 ||
  fail "php-8.2-wasi.patch does not apply"
# shellcheck disable=SC2016
sed -i 's/^\( *\)as_fn_error \$? "fibers not available on this platform" "\$LINENO" 5$/\1: # airlock: no fibers on wasm32-wasi/' \
  "$src/configure"
grep -q 'airlock: no fibers on wasm32-wasi' "$src/configure" || fail "configure's fiber check not found"

# Thin WASI-SDK-shaped folder: bin/ wrappers + a sysroot that only exposes
# wasi-libc (so configure never sees the host's headers or libraries).
sdk="$work/wasi-sdk"
sysroot="$sdk/share/wasi-sysroot"
mkdir -p "$sdk/bin" "$sysroot/include" "$sysroot/lib"
ln -s /usr/include/wasm32-wasi "$sysroot/include/wasm32-wasi"
ln -s /usr/lib/wasm32-wasi "$sysroot/lib/wasm32-wasi"
wrap() { printf '#!/bin/sh\nexec %s "$@"\n' "$2" >"$sdk/bin/$1"; chmod +x "$sdk/bin/$1"; }
wrap clang       "clang-16 --target=wasm32-wasi --sysroot=$sysroot"
wrap clang-cpp   "clang-16 --target=wasm32-wasi --sysroot=$sysroot -E"
wrap wasm-ld     "wasm-ld-16"
wrap llvm-ar     "llvm-ar-16"
wrap llvm-ranlib "llvm-ranlib-16"
wrap llvm-nm     "llvm-nm-16"
export PATH="$sdk/bin:$PATH"

# Our runtime pieces, copied into the tree (fixed paths in the flags).
cp -r "$KIT/include" "$src/airlock-wasi-include"
cp "$SJLJ/setjmp.h" "$src/airlock-wasi-include/setjmp.h"
compat="$src/airlock-wasi/libairlock_php_wasi.a"
mkdir -p "$src/airlock-wasi"
(cd "$src/airlock-wasi" &&
  clang -O2 -mexception-handling -mllvm -wasm-enable-sjlj -c "$SJLJ/setjmp.c" -o wasm_sjlj.o &&
  clang -O2 -D_GNU_SOURCE -isystem "$src/airlock-wasi-include" -c "$KIT/wasi_compat.c" -o wasi_compat.o &&
  llvm-ar rcs "$compat" wasm_sjlj.o wasi_compat.o) >>"$log" 2>&1 || fail "compiling php/*.c"

WASM_CFLAGS="-O2 -D_GNU_SOURCE $WASI_EMULATION -mllvm -wasm-enable-sjlj -isystem $src/airlock-wasi-include -include $src/airlock-wasi-include/airlock_wasi_compat.h"
epoch="$(dpkg-parsechangelog -l "$src/debian/changelog" -STimestamp)"
say "configuring (log: $log)"
# shellcheck disable=SC2086
(cd "$src" && env CC=clang CPP=clang-cpp AR=llvm-ar RANLIB=llvm-ranlib NM=llvm-nm \
  CFLAGS="$WASM_CFLAGS" LDFLAGS="$WASM_LDFLAGS" LIBS="$WASI_EMULATION_LIBS" $CONFIGURE_CACHE \
  ./configure --build="$(./build/config.guess)" $CONFIGURE_FLAGS) >>"$log" 2>&1 || fail "configure"
say "compiling with $(nproc) jobs"
# The helpers join the link only (configure's link tests must not see them).
# The stack flags go to the program's link itself (PHP's Makefile leaves
# configure's LDFLAGS out of it: recipe 1 and 2 linked with wasm-ld's
# default 64 KiB stack after the data, where an overflow corrupts data).
(cd "$src" && SOURCE_DATE_EPOCH="$epoch" make -j"$(nproc)" \
  EXTRA_LDFLAGS_PROGRAM="$WASM_LDFLAGS" EXTRA_LIBS="-lm $WASI_EMULATION_LIBS $compat") >>"$log" 2>&1 || fail "make"
[ -f "$src/sapi/cli/php" ] || fail "make produced no sapi/cli/php"
# Check the layout: the stack first (__stack_pointer, the first global,
# starts at 8 MiB or more and the data comes after it).
sp="$(python3 - "$src/sapi/cli/php" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
def leb(i, signed=False):
    r = s = 0
    while True:
        x = b[i]; i += 1; r |= (x & 0x7f) << s; s += 7
        if x < 0x80:
            if signed and x & 0x40: r -= 1 << s
            return r, i
i = 8
while i < len(b):
    sid = b[i]; size, j = leb(i + 1)
    if sid == 6:
        n, j = leb(j); j += 2  # type, mutability
        assert b[j] == 0x41   # i32.const
        print(leb(j + 1, True)[0]); break
    i = j + size
PY
)"
[ -n "$sp" ] && [ "$sp" -ge 8388608 ] || fail "php.wasm's stack is not 8 MiB placed first (__stack_pointer starts at ${sp:-?})"
exts="$(grep -o 'phpext_[a-z0-9_]*_ptr' "$src/main/internal_functions_cli.c" | sed 's/^phpext_//; s/_ptr$//' | sort | tr '\n' ' ')"

# Stage the cache entry next to its final place (same filesystem => atomic mv).
stage="$(mktemp -d "$CACHE_ROOT/.php-$version.XXXXXX")"
cp "$src/sapi/cli/php" "$stage/php.wasm"
wasm_sha="$(sha256sum "$stage/php.wasm" | cut -d' ' -f1)"
kit_sha="$( (cd "$KIT" && find . -type f | LC_ALL=C sort | xargs sha256sum; sha256sum "$SJLJ"/setjmp.{c,h} | cut -d' ' -f1) | sha256sum | cut -d' ' -f1)"
cat >"$stage/MANIFEST" <<MANIFEST
VERSION=$version
RECIPE=$RECIPE_REV
SOURCE_PACKAGE=$SRC_PKG
PHP_VERSION=$upstream
CLANG=$(clang-16 --version | head -n1)
WASI_LIBC=$(dpkg-query -W -f='${Version}' wasi-libc)
CFLAGS=$WASM_CFLAGS
LDFLAGS=$WASM_LDFLAGS
CONFIGURE_FLAGS=$(tr -s ' \n' '  ' <<<"$CONFIGURE_FLAGS")
CONFIGURE_CACHE=$CONFIGURE_CACHE
SETJMP=wasm-exceptions (clang -mllvm -wasm-enable-sjlj + src/runtimes/wasm_setjmp/setjmp.c)
EXTENSIONS=${exts% }
SHA256_KIT=$kit_sha
SHA256_php_wasm=$wasm_sha
MANIFEST
chmod 755 "$stage"
cp "$log" "$stage/build.log"

final="$CACHE_ROOT/$(entry "$version")"
if [ -e "$final" ]; then  # incomplete or corrupt earlier entry
  old="$(mktemp -d "$CACHE_ROOT/.php-old.XXXXXX")"; mv -T "$final" "$old/x"; rm -rf "$old"
fi
mv -T "$stage" "$final"; stage=""
ln -sfn "$(entry "$version")" "$CACHE_ROOT/php"
say "built $final in $(( $(date +%s) - start ))s: php.wasm $(du -h "$final/php.wasm" | cut -f1)"
