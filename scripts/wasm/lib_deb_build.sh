# Shared by the WASI builds from Debian source packages (build_python.sh,
# build_php.sh); sourced, not run. The caller defines say() and sets
# SRC_PKG (the source package) and CACHE_ROOT before calling these.

# The deb-src entries apt needs for `apt-get source`, added once (a file of
# our own) when apt knows no source for $SRC_PKG.
DEB_SRC_LIST=/etc/apt/sources.list.d/airlock-deb-src.list
ensure_deb_src() {
  # (no `| grep -q`: with pipefail, grep's early exit would fail apt-cache)
  if ! apt-cache showsrc --only-source "$SRC_PKG" 2>/dev/null | grep '^Version:' >/dev/null; then
    if [ ! -f "$DEB_SRC_LIST" ]; then
      # shellcheck disable=SC1091
      local codename; codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
      say "adding deb-src entries in $DEB_SRC_LIST"
      cat >"$DEB_SRC_LIST" <<LIST
# Added by airlock's scripts/wasm/ builds: source packages for the WASI builds.
deb-src http://deb.debian.org/debian ${codename} main
deb-src http://deb.debian.org/debian ${codename}-updates main
deb-src http://deb.debian.org/debian-security ${codename}-security main
LIST
    fi
    apt-get update -qq >/dev/null
  fi
}

# Source versions of $SRC_PKG known to apt, newest first.
source_versions() {
  apt-cache showsrc --only-source "$SRC_PKG" | sed -n 's/^Version: //p' |
    sort -u | sort -r -V
}

# begin_build NAME: one build of NAME at a time (a lock in the cache, the
# cache re-checked by the caller after waiting), leftovers of a killed
# build removed, a fixed build dir (its own lock; the temp dir's name stays
# out of the artifacts, so rebuilds do not differ by it) removed on exit,
# and the log. Sets: work, log, start, stage (a staging dir the caller
# fills; removed on exit unless cleared), and defines fail().
begin_build() {
  local name="$1"
  exec 9>"$CACHE_ROOT/.$name-build.lock"
  flock 9
  find "$CACHE_ROOT" -maxdepth 1 -name ".$name-*" -type d -exec rm -rf {} +
  work="${TMPDIR:-/tmp}/airlock-wasm-$name-build"
  exec 8>"$work.lock"
  flock 8
  rm -rf "$work"
  mkdir -p "$work"
  stage=""
  trap 'rm -rf "$work"; [ -z "$stage" ] || rm -rf "$stage"' EXIT
  trap 'exit 143' INT TERM HUP   # run the EXIT cleanup when interrupted too
  log="$CACHE_ROOT/build-$name.log"
  : >"$log"
  start=$(date +%s)
}

fail() {
  say "FAILED: $* (log: $log); last lines:"
  tail -n 40 "$log" >&2
  exit 1
}
