#!/bin/bash
# Builds airlock's OCI image from Debian packages only (no registry pull):
# a minimal Debian 12 root made by mmdebstrap, airlock's own .deb installed in
# it, the WASM tier's interpreters copied in, then `podman import` with the
# image config (entrypoint, labels, user). docs/deploy.md#the-image.
#
#   packaging/oci/build.sh [--deb PATH] [--tag NAME:TAG] [--science] [--keep-rootfs DIR] [--dry-run]
#
# --deb      the package to install (default: build/airlock_<version>_amd64.deb,
#            built through the shared build lock if missing)
# --tag      image name (default: the repository of server.json's OCI package,
#            ghcr.io/airlock/airlock, tagged with the .deb's version; the
#            server.json entry names exactly that image)
# --science  also install python3-matplotlib (the rest of the package's
#            Recommends) and the Recommends of everything; numpy and pandas are
#            always in (airlock selftest expects them, models reach for them)
# --keep-rootfs DIR  leave the root filesystem in DIR (for inspection)
# --dry-run  print the image's tag and labels (tag=..., label.KEY=VALUE) and
#            build nothing; needs neither root nor the tools (the drift test,
#            tests/deploy/manifests_test.py, compares them with server.json)
#
# Environment: AIRLOCK_WASM_CACHE_SRC (default /var/cache/airlock/wasm, what
# scripts/setup.sh builds); AIRLOCK_BUILD_DIR (default <repo>/build).
# Prints the image's size and the biggest packages at the end.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build_dir="${AIRLOCK_BUILD_DIR:-$repo/build}"
wasm_src="${AIRLOCK_WASM_CACHE_SRC:-/var/cache/airlock/wasm}"
deb=""
tag=""
science=0
keep=""
dry_run=0
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) deb="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --science) science=1; shift ;;
    --keep-rootfs) keep="$2"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    *) echo "usage: $0 [--deb PATH] [--tag NAME:TAG] [--science] [--keep-rootfs DIR] [--dry-run]" >&2; exit 2 ;;
  esac
done

if [ "$dry_run" = 0 ]; then
  for tool in mmdebstrap podman dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "build.sh: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "build.sh: run as root (mmdebstrap --mode=root, podman import)" >&2; exit 1; }
fi

if [ -z "$deb" ] && [ "$dry_run" = 1 ]; then
  deb="$(ls "$build_dir"/airlock_*_amd64.deb 2>/dev/null | head -1 || true)"
  [ -n "$deb" ] || { echo "build.sh: --dry-run needs --deb (there is no .deb in $build_dir)" >&2; exit 1; }
fi
if [ -z "$deb" ]; then
  deb="$(ls "$build_dir"/airlock_*_amd64.deb 2>/dev/null | head -1 || true)"
  if [ -z "$deb" ]; then
    echo "build.sh: no .deb in $build_dir; building the package target (under /tmp/airlock-build.lock)" >&2
    flock /tmp/airlock-build.lock cmake --build "$build_dir" --target package >&2
    deb="$(ls "$build_dir"/airlock_*_amd64.deb | head -1)"
  fi
fi
[ -f "$deb" ] || { echo "build.sh: $deb: no such package" >&2; exit 1; }
version="$(dpkg-deb -f "$deb" Version)"
# server.json's OCI package names the image (identifier REPOSITORY:VERSION).
server_json() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($1)" "$repo/server.json"; }
image_repo="$(server_json 'next(p["identifier"].rsplit(":", 1)[0] for p in s["packages"] if p["registryType"] == "oci")')"
tag="${tag:-$image_repo:$version}"
deb_sha="$(sha256sum "$deb" | cut -d' ' -f1)"
# The .deb's contents (control files, every path with its type, mode and
# link target, every file's bytes) without the archive's timestamps: a
# package re-packed from the same binaries (ctest package_install packs it
# on every run) keeps its key.
deb_content_sha() {
  local d
  d="$(mktemp -d)"
  dpkg-deb -R "$1" "$d"
  (cd "$d" && find . -printf '%y %m %p %l\n' | LC_ALL=C sort &&
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
  rm -rf "$d"
}
# What the OCI tests key their cached image by (tests/oci/lib.sh reads it
# from --dry-run): this package's contents and this script.
build_key="$( (deb_content_sha "$deb"; sha256sum <"${BASH_SOURCE[0]}") | sha256sum | cut -d' ' -f1)"
server_name="$(server_json 's["name"]')"
description="$(server_json 's["description"]')"
created="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
labels=(
  "org.opencontainers.image.title=airlock"
  "org.opencontainers.image.description=$description"
  "org.opencontainers.image.version=$version"
  "org.opencontainers.image.source=https://github.com/airlock/airlock"
  "org.opencontainers.image.licenses=NOASSERTION"
  "org.opencontainers.image.created=$created"
  "org.opencontainers.image.base.name=debian:bookworm(mmdebstrap)"
  # MCP registries match an OCI package to its server.json entry by this label.
  "io.modelcontextprotocol.server.name=$server_name"
  "io.airlock.deb.sha256=$deb_sha"
  "io.airlock.build.key=$build_key"
)
if [ "$dry_run" = 1 ]; then
  echo "tag=$tag"
  for l in "${labels[@]}"; do echo "label.$l"; done
  exit 0
fi

work="$(mktemp -d /tmp/airlock-oci.XXXXXX)"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
cp "$deb" "$work/airlock.deb"
root="$work/root"

# The package's runtime Depends that are language runtimes come with it
# (apt resolves them when the .deb is installed). Besides: numpy and pandas
# (two of its three Recommends; matplotlib only with --science: it pulls fonts
# and GUI toolkits' data), ca-certificates for code that fetches over TLS when
# a policy allows network, and tini as PID 1 (reaps, forwards signals, and
# keeps airlock off PID 1, where selftest's "signal the supervisor" probe
# cannot tell the jail's init from it).
include="ca-certificates,tini,python3-numpy,python3-pandas"
apt_opts="--no-install-recommends"
[ "$science" = 1 ] && apt_opts="--install-recommends"

# Trim: no docs (but copyrights and airlock's own), no man pages, no locales
# but C, no apt lists or caches (mmdebstrap removes those itself).
dpkgopts=(
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-include=/usr/share/doc/airlock/*'
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/lintian/*'
  --dpkgopt='path-exclude=/usr/share/ri/*'
)

echo "build.sh: mmdebstrap bookworm (minbase) + $(basename "$deb") -> $tag" >&2
mmdebstrap --mode=root --variant=minbase --format=directory \
  --include="$include" "${dpkgopts[@]}" \
  --customize-hook="copy-in '$work/airlock.deb' /tmp" \
  --customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y $apt_opts /tmp/airlock.deb" \
  --customize-hook='rm -f "$1/tmp/airlock.deb"' \
  --customize-hook='chroot "$1" groupadd --gid 65532 airlock' \
  --customize-hook='chroot "$1" useradd --uid 65532 --gid 65532 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin airlock' \
  --customize-hook='chroot "$1" apt-get clean' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/debconf/*-old "$1"/var/log/*.log "$1"/var/log/apt/* "$1"/usr/share/doc/airlock/docs/console' \
  bookworm "$root" >&2

# The WASM tier's interpreters, where airlock looks for them
# (src/runtimes/wasm_languages.cc: $AIRLOCK_WASM_CACHE, else
# /var/cache/airlock/wasm). Without them the image still runs the native tier.
if [ -d "$wasm_src/python" ] && [ -d "$wasm_src/ruby" ] && [ -d "$wasm_src/php" ]; then
  mkdir -p "$root/var/cache/airlock/wasm"
  (cd "$wasm_src" && tar -c --exclude='*.log' .) | tar -x -C "$root/var/cache/airlock/wasm"
else
  echo "build.sh: WARNING: no WASM interpreters in $wasm_src (scripts/setup.sh builds them); the image's WASM tier has JavaScript only" >&2
fi

echo "build.sh: root filesystem $(du -sh "$root" | cut -f1); biggest packages (KiB):" >&2
dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Installed-Size}\t${Package}\n' | sort -rn | head -15 >&2
echo "build.sh: WASM cache $(du -sh "$root/var/cache/airlock/wasm" 2>/dev/null | cut -f1)" >&2

label_changes=()
for l in "${labels[@]}"; do label_changes+=(--change "LABEL ${l%%=*}=\"${l#*=}\""); done
tar -C "$root" --numeric-owner -c . | podman import \
  --change 'ENTRYPOINT ["/usr/bin/tini", "--", "/usr/bin/airlock"]' \
  --change 'CMD ["serve"]' \
  --change 'WORKDIR /' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'EXPOSE 8787' \
  "${label_changes[@]}" \
  - "$tag" >&2

if [ -n "$keep" ]; then rm -rf "$keep"; mv "$root" "$keep"; fi
echo "build.sh: built $tag ($(podman image inspect --format '{{.Size}}' "$tag") bytes)" >&2
echo "$tag"
