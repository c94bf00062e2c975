#!/usr/bin/env bash
# Builds CPython for wasm32-wasi from Debian's python3.11 source package with
# Debian's clang-16 + wasi-libc, and caches the result outside the clone:
#
#   $AIRLOCK_WASM_CACHE (default /var/cache/airlock/wasm)/python-<debian-version>-r<RECIPE_REV>/
#     python.wasm         the interpreter (WASI preview1 command module)
#     python-session.wasm the same interpreter as a reactor for sessions
#                         (scripts/wasm/python/airlock_session.c: between
#                         turns no frame is live, so a session can be
#                         checkpointed: engine/js/python_session.h)
#     python-stdlib.tar   uncompressed tar of lib/python3.11/... with each
#                         module's bytecode beside it (__pycache__/*.pyc,
#                         unchecked-hash: never compared with the source);
#                         extract or mount it so that / holds lib/
#     MANIFEST            key=value: VERSION, sha256 of both files, flags
#   $AIRLOCK_WASM_CACHE/python -> python-<debian-version>-r<RECIPE_REV>   (latest build)
#
# Usage (as root; run scripts/wasm/install_toolchain.sh first):
#   scripts/wasm/build_python.sh            # build unless cached
#   AIRLOCK_WASM_CACHE=/tmp/c scripts/wasm/build_python.sh
#   PYTHON_DEB_VERSION=3.11.2-6+deb12u8 scripts/wasm/build_python.sh
#
# A complete cached build (MANIFEST present, hashes match) makes this a no-op.
# The cache key is the Debian version plus RECIPE_REV: bump RECIPE_REV
# whenever this script changes what gets built.
# The build runs in a temporary dir and is renamed into place, so an
# interrupted run never leaves a half-filled cache dir. Recipe: CPython's own
# Tools/wasm/config.site-wasm32-wasi + Tools/wasm/wasi-env, pointed at a thin
# WASI-SDK-shaped folder of wrappers around clang-16 / wasm-ld-16 / llvm-ar-16.
set -euo pipefail

CACHE_ROOT="${AIRLOCK_WASM_CACHE:-/var/cache/airlock/wasm}"
SRC_PKG=python3.11
RECIPE_REV=3  # 2: bytecode for the standard library in the tar; 3: python-session.wasm
BUILD_PYTHON=/usr/bin/python3.11
WASM_CFLAGS="-Wno-error=int-conversion"
CONFIGURE_FLAGS="--host=wasm32-unknown-wasi --prefix=/ --disable-test-modules --with-build-python=${BUILD_PYTHON}"
# Stdlib parts that are useless inside the sandbox (GUI, tests, pip bootstrap).
STDLIB_DROP=(test idlelib tkinter ensurepip turtledemo turtle.py lib2to3/tests
             unittest/test ctypes/test sqlite3/test tkinter distutils/tests)

say() { echo "build_python: $*" >&2; }
die() { say "error: $*"; exit 1; }
# shellcheck source=scripts/wasm/lib_deb_build.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_deb_build.sh"

for tool in clang-16 wasm-ld-16 llvm-ar-16 llvm-ranlib-16 "$BUILD_PYTHON" make dpkg-source; do
  command -v "$tool" >/dev/null || die "$tool missing; run scripts/wasm/install_toolchain.sh"
done

# Checks a cache dir: MANIFEST present and both hashes match.
cache_complete() {
  local dir="$1" f want got
  [ -f "$dir/MANIFEST" ] || return 1
  for f in python.wasm python-session.wasm python-stdlib.tar; do
    want="$(sed -n "s/^SHA256_${f//[.-]/_}=//p" "$dir/MANIFEST")"
    [ -n "$want" ] && [ -f "$dir/$f" ] || return 1
    got="$(sha256sum "$dir/$f" | cut -d' ' -f1)"
    [ "$want" = "$got" ] || return 1
  done
}

# --- which Debian source version ------------------------------------------
if [ -n "${PYTHON_DEB_VERSION:-}" ]; then
  candidates=("$PYTHON_DEB_VERSION")
else
  ensure_deb_src
  mapfile -t candidates < <(source_versions)
  ((${#candidates[@]})) || die "apt knows no source package $SRC_PKG"
fi

entry() { echo "python-$1-r$RECIPE_REV"; }
use_cached() {
  ln -sfn "$(entry "$1")" "$CACHE_ROOT/python"
  say "cached: $CACHE_ROOT/$(entry "$1") (python.wasm $(du -h "$CACHE_ROOT/$(entry "$1")/python.wasm" | cut -f1))"
  exit 0
}

# A version whose files the mirror did not serve is not retried for a day
# (mirrors can list a security update before they carry its files).
unfetchable() { [ -n "$(find "$CACHE_ROOT/.unfetchable-$1" -mmin -1440 2>/dev/null)" ]; }

# Fast path: the newest fetchable source version is already cached.
mkdir -p "$CACHE_ROOT"
for v in "${candidates[@]}"; do
  unfetchable "$v" && [ "$v" != "${candidates[-1]}" ] && continue
  if cache_complete "$CACHE_ROOT/$(entry "$v")"; then use_cached "$v"; fi
  break
done

# --- build -----------------------------------------------------------------
begin_build python

# apt-get source: the newest version whose files can actually be fetched (a
# mirror may lag behind its index); an older version already cached wins over
# downloading it again.
version=""
for v in "${candidates[@]}"; do
  if cache_complete "$CACHE_ROOT/$(entry "$v")"; then use_cached "$v"; fi
  unfetchable "$v" && [ "$v" != "${candidates[-1]}" ] && continue
  say "fetching source $SRC_PKG=$v"
  if (cd "$work" && apt-get source -qq "$SRC_PKG=$v") >>"$log" 2>&1; then
    rm -f "$CACHE_ROOT/.unfetchable-$v"; version="$v"; break
  fi
  touch "$CACHE_ROOT/.unfetchable-$v"
  rm -rf "${work:?}"/*
done
[ -n "$version" ] || fail "apt-get source $SRC_PKG"
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name "${SRC_PKG}-*" | head -n1)"
[ -f "$src/Tools/wasm/wasi-env" ] || fail "no Tools/wasm/wasi-env in the source"
upstream="${version%%-*}"
build_py_version="$("$BUILD_PYTHON" -c 'import platform; print(platform.python_version())')"
[ "$build_py_version" = "$upstream" ] ||
  say "warning: build python is $build_py_version, source is $upstream"

# Thin WASI-SDK-shaped folder: bin/ wrappers + a sysroot that only exposes
# wasi-libc (so pkg-config/configure never see the host's libraries).
sdk="$work/wasi-sdk"
mkdir -p "$sdk/bin" "$sdk/share/wasi-sysroot/include" "$sdk/share/wasi-sysroot/lib"
ln -s /usr/include/wasm32-wasi "$sdk/share/wasi-sysroot/include/wasm32-wasi"
ln -s /usr/lib/wasm32-wasi "$sdk/share/wasi-sysroot/lib/wasm32-wasi"
wrap() { printf '#!/bin/sh\nexec %s "$@"\n' "$2" >"$sdk/bin/$1"; chmod +x "$sdk/bin/$1"; }
wrap clang     "clang-16 --target=wasm32-wasi"
wrap clang++   "clang++-16 --target=wasm32-wasi"
wrap clang-cpp "clang-16 --target=wasm32-wasi -E"
wrap wasm-ld   "wasm-ld-16"
wrap llvm-ar   "llvm-ar-16"
wrap ranlib    "llvm-ranlib-16"
wrap llvm-ranlib "llvm-ranlib-16"

build="$src/builddir/wasi"
mkdir -p "$build"
say "configuring (log: $log)"
# shellcheck disable=SC2086
(cd "$build" &&
  CONFIG_SITE="$src/Tools/wasm/config.site-wasm32-wasi" CFLAGS="$WASM_CFLAGS" \
  WASI_SDK_PATH="$sdk" CCACHE_DISABLE=1 \
  "$src/Tools/wasm/wasi-env" "$src/configure" -C \
    --build="$("$src/config.guess")" $CONFIGURE_FLAGS) >>"$log" 2>&1 ||
  fail "configure"
# Reproducible build info (Debian's reproducible-buildinfo.diff): the date of
# the Debian changelog entry instead of __DATE__/__TIME__.
epoch="$(dpkg-parsechangelog -l "$src/debian/changelog" -STimestamp)"
build_date="$(LC_ALL=C date -u +'%b %e %Y' -d "@$epoch")"
build_time="$(LC_ALL=C date -u +'%H:%M:%S' -d "@$epoch")"
say "compiling with $(nproc) jobs"
(cd "$build" && WASI_SDK_PATH="$sdk" CCACHE_DISABLE=1 SOURCE_DATE_EPOCH="$epoch" \
  "$src/Tools/wasm/wasi-env" make -j"$(nproc)" \
    BUILD_DATE="$build_date" BUILD_TIME="$build_time") >>"$log" 2>&1 || fail "make"
[ -f "$build/python.wasm" ] || fail "make produced no python.wasm"
# The session reactor: the same objects and link flags, our entry points.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
(cd "$build" && WASI_SDK_PATH="$sdk" CCACHE_DISABLE=1 SOURCE_DATE_EPOCH="$epoch" \
  "$src/Tools/wasm/wasi-env" make -f Makefile -f "$here/python/session.mk" \
    AIRLOCK_SESSION_C="$here/python/airlock_session.c" \
    BUILD_DATE="$build_date" BUILD_TIME="$build_time" python-session.wasm) >>"$log" 2>&1 ||
  fail "make python-session.wasm"

# Stage the cache entry next to its final place (same filesystem => atomic mv).
stage="$(mktemp -d "$CACHE_ROOT/.python-$version.XXXXXX")"
cp "$build/python.wasm" "$stage/python.wasm"
cp "$build/python-session.wasm" "$stage/python-session.wasm"

# Stdlib: Lib/ minus the useless parts, plus the generated sysconfig data.
root="$work/stdlib-root"
lib="$root/lib/python3.11"
mkdir -p "$lib/lib-dynload"
cp -a "$src/Lib/." "$lib/"
for d in "${STDLIB_DROP[@]}"; do rm -rf "${lib:?}/$d"; done
find "$lib" -name __pycache__ -type d -prune -exec rm -rf {} +
find "$lib" -name '*.pyc' -delete
sysconfigdata="$(find "$build/build" -name '_sysconfigdata_*.py' | head -n1)"
[ -n "$sysconfigdata" ] || fail "no _sysconfigdata_*.py in the build"
cp "$sysconfigdata" "$lib/"
# Bytecode beside every module, so an import reads it instead of compiling
# the source in every run (`import json` 124 -> 14 ms in the WASM tier). The
# build python is the same 3.11 (same magic number); unchecked-hash pycs are
# used without comparing them with the source (the tree is read-only in the
# jail) and carry no mtime; -s/-p record the path the guest sees.
"$BUILD_PYTHON" -m compileall -q -j"$(nproc)" --invalidation-mode unchecked-hash \
  -s "$root" -p /usr "$lib" >>"$log" 2>&1 || fail "compileall"
(cd "$root" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
  --format=gnu -cf "$stage/python-stdlib.tar" lib) >>"$log" 2>&1 || fail "tar"

wasm_sha="$(sha256sum "$stage/python.wasm" | cut -d' ' -f1)"
session_sha="$(sha256sum "$stage/python-session.wasm" | cut -d' ' -f1)"
tar_sha="$(sha256sum "$stage/python-stdlib.tar" | cut -d' ' -f1)"
cat >"$stage/MANIFEST" <<MANIFEST
VERSION=$version
SOURCE_PACKAGE=$SRC_PKG
PYTHON_VERSION=$upstream
CLANG=$(clang-16 --version | head -n1)
WASI_LIBC=$(dpkg-query -W -f='${Version}' wasi-libc)
BUILD_PYTHON=$BUILD_PYTHON $build_py_version
CFLAGS=$WASM_CFLAGS
CONFIGURE_FLAGS=$CONFIGURE_FLAGS
CONFIG_SITE=Tools/wasm/config.site-wasm32-wasi
STDLIB_ROOT=lib/python3.11
STDLIB_DROPPED=${STDLIB_DROP[*]}
STDLIB_BYTECODE=unchecked-hash
RECIPE_REV=$RECIPE_REV
SHA256_python_wasm=$wasm_sha
SHA256_python_session_wasm=$session_sha
SHA256_python_stdlib_tar=$tar_sha
MANIFEST
chmod 755 "$stage"
cp "$log" "$stage/build.log"

final="$CACHE_ROOT/$(entry "$version")"
if [ -e "$final" ]; then  # incomplete or corrupt earlier entry
  old="$(mktemp -d "$CACHE_ROOT/.python-old.XXXXXX")"; mv -T "$final" "$old/x"; rm -rf "$old"
fi
mv -T "$stage" "$final"; stage=""
ln -sfn "$(entry "$version")" "$CACHE_ROOT/python"
say "built $final in $(( $(date +%s) - start ))s: python.wasm $(du -h "$final/python.wasm" | cut -f1), python-stdlib.tar $(du -h "$final/python-stdlib.tar" | cut -f1)"
