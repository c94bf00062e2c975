#!/usr/bin/env bash
# Installs CRuby for the WASM tier from the npm package @ruby/3.4-wasm-wasi
# (ruby.wasm's prebuilt build: the interpreter with its standard library packed
# inside the module by wasi-vfs) and caches it outside the clone:
#
#   $AIRLOCK_WASM_CACHE (default /var/cache/airlock/wasm)/ruby-3.4-wasm-wasi-<version>/
#     ruby.wasm   dist/ruby+stdlib.wasm: a WASI preview1 *reactor* module (no
#                 _start), driven by `airlock-js --wasi-ruby`
#     MANIFEST    key=value: VERSION, RUBY_VERSION, the npm tarball's sha1,
#                 sha256 of ruby.wasm
#   $AIRLOCK_WASM_CACHE/ruby -> ruby-3.4-wasm-wasi-<version>
#
# Usage (as root, or any user who can write the cache):
#   scripts/wasm/install_ruby.sh            # download unless cached
#   AIRLOCK_WASM_CACHE=/tmp/c scripts/wasm/install_ruby.sh
#
# The tarball's sha1 (npm's dist.shasum, pinned here) is checked before
# anything is unpacked. A complete cached entry (MANIFEST present, hash
# matches) makes this a no-op. The entry is assembled in a temporary dir and
# renamed into place, so an interrupted run never leaves a half-filled cache.
set -euo pipefail

CACHE_ROOT="${AIRLOCK_WASM_CACHE:-/var/cache/airlock/wasm}"
PKG=@ruby/3.4-wasm-wasi
VERSION=2.10.1
TARBALL_URL="https://registry.npmjs.org/@ruby/3.4-wasm-wasi/-/3.4-wasm-wasi-${VERSION}.tgz"
TARBALL_SHA1=f397c7adb3496b6657b67daf775ba30ccacaf860
WASM_IN_TARBALL=package/dist/ruby+stdlib.wasm
NAME="ruby-3.4-wasm-wasi-${VERSION}"

say() { echo "install_ruby: $*" >&2; }
die() { say "error: $*"; exit 1; }

for tool in tar sha1sum sha256sum; do
  command -v "$tool" >/dev/null || die "$tool missing"
done

# Checks a cache dir: MANIFEST present and ruby.wasm's hash matches.
cache_complete() {
  local dir="$1" want got
  [ -f "$dir/MANIFEST" ] && [ -f "$dir/ruby.wasm" ] || return 1
  want="$(sed -n 's/^SHA256_ruby_wasm=//p' "$dir/MANIFEST")"
  [ -n "$want" ] || return 1
  got="$(sha256sum "$dir/ruby.wasm" | cut -d' ' -f1)"
  [ "$want" = "$got" ]
}

final="$CACHE_ROOT/$NAME"
use_cached() {
  ln -sfn "$NAME" "$CACHE_ROOT/ruby"
  say "cached: $final (ruby.wasm $(du -h "$final/ruby.wasm" | cut -f1))"
  exit 0
}

mkdir -p "$CACHE_ROOT"
if cache_complete "$final"; then use_cached; fi

exec 9>"$CACHE_ROOT/.ruby-install.lock"
flock 9   # one install at a time; re-check the cache after waiting
if cache_complete "$final"; then use_cached; fi
# Leftovers of a killed install (staging dirs are only ever used under the lock).
find "$CACHE_ROOT" -maxdepth 1 -name '.ruby-*' -type d -exec rm -rf {} +

work="$(mktemp -d "${TMPDIR:-/tmp}/airlock-wasm-ruby.XXXXXX")"
stage=""
cleanup() { rm -rf "$work"; [ -z "$stage" ] || rm -rf "$stage"; }
trap cleanup EXIT
trap 'exit 143' INT TERM HUP   # run the EXIT cleanup when interrupted too

# Download: curl from the registry, else npm's own client.
tgz="$work/pkg.tgz"
say "downloading $PKG@$VERSION"
if command -v curl >/dev/null; then
  curl -fsSL --retry 3 -o "$tgz" "$TARBALL_URL" || die "download failed: $TARBALL_URL"
elif command -v npm >/dev/null; then
  (cd "$work" && npm pack --silent "$PKG@$VERSION" >/dev/null) || die "npm pack $PKG@$VERSION failed"
  mv "$work/ruby-3.4-wasm-wasi-${VERSION}.tgz" "$tgz"
else
  die "neither curl nor npm is installed"
fi
got="$(sha1sum "$tgz" | cut -d' ' -f1)"
[ "$got" = "$TARBALL_SHA1" ] || die "checksum mismatch for $PKG@$VERSION: sha1 $got, expected $TARBALL_SHA1"

tar -xzf "$tgz" -C "$work" "$WASM_IN_TARBALL" || die "the tarball holds no $WASM_IN_TARBALL"
# A WebAssembly module starts with "\0asm".
[ "$(head -c4 "$work/$WASM_IN_TARBALL" | od -An -tx1 | tr -d ' \n')" = "0061736d" ] ||
  die "$WASM_IN_TARBALL is not a WebAssembly module"

# The interpreter's own version line, e.g. "ruby 3.4.1 (2024-12-25 revision 48d4efcb85)".
ruby_description="$(LC_ALL=C grep -a -o -m1 'ruby 3\.[0-9]*\.[0-9]* ([0-9-]* revision [0-9a-f]*)' \
  "$work/$WASM_IN_TARBALL" | head -n1 || true)"
ruby_version="$(echo "$ruby_description" | cut -d' ' -f2)"
[ -n "$ruby_version" ] || die "no ruby version string in $WASM_IN_TARBALL"

# Stage the cache entry next to its final place (same filesystem => atomic mv).
stage="$(mktemp -d "$CACHE_ROOT/.ruby-$VERSION.XXXXXX")"
mv "$work/$WASM_IN_TARBALL" "$stage/ruby.wasm"
chmod 644 "$stage/ruby.wasm"
cat >"$stage/MANIFEST" <<MANIFEST
VERSION=$VERSION
PACKAGE=$PKG
RUBY_VERSION=$ruby_version
RUBY_DESCRIPTION=$ruby_description
SOURCE=$TARBALL_URL
SHA1_tarball=$TARBALL_SHA1
WASM_FILE=$WASM_IN_TARBALL
SHA256_ruby_wasm=$(sha256sum "$stage/ruby.wasm" | cut -d' ' -f1)
MANIFEST
chmod 755 "$stage"

if [ -e "$final" ]; then  # incomplete or corrupt earlier entry
  old="$(mktemp -d "$CACHE_ROOT/.ruby-old.XXXXXX")"; mv -T "$final" "$old/x"; rm -rf "$old"
fi
mv -T "$stage" "$final"; stage=""
ln -sfn "$NAME" "$CACHE_ROOT/ruby"
say "installed $final (ruby.wasm $(du -h "$final/ruby.wasm" | cut -f1))"
