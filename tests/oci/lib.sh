# shellcheck shell=bash
# Shared by the OCI tests (source it): the image packaging/oci/build.sh
# builds, cached by its label io.airlock.build.key = sha256 of the .deb's
# contents (not its archive timestamps) and build.sh, the key build.sh
# itself writes and prints with --dry-run, so a test rebuilds only when
# either changed. Used by tests/oci/image_test.sh (ctest oci_image) and
# tests/oci/kube_play_test.sh (ctest oci_kube_play).
#
#   oci_image_ready BUILD_DIR TEST_NAME
#     sets OCI_DEB, OCI_VERSION, OCI_IMAGE (server.json's OCI identifier,
#     the tag `build.sh --dry-run` prints), building the .deb (under the
#     shared build lock) and the image when needed.
#     AIRLOCK_OCI_TAG=NAME:TAG uses (and caches) another tag, e.g. to time
#     an uncached build without touching the shared one.

OCI_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

oci_image_ready() {
  local build="$1" name="$2" key start
  OCI_DEB="$(ls "$build"/airlock_*_amd64.deb 2>/dev/null | head -1 || true)"
  if [ -z "$OCI_DEB" ]; then
    flock /tmp/airlock-build.lock cmake --build "$build" --target package >/dev/null
    OCI_DEB="$(ls "$build"/airlock_*_amd64.deb | head -1)"
  fi
  # shellcheck disable=SC2034  # for the sourcing test (image_test.sh)
  OCI_VERSION="$(dpkg-deb -f "$OCI_DEB" Version)"
  local dry
  dry="$("$OCI_REPO/packaging/oci/build.sh" --dry-run --deb "$OCI_DEB")"
  OCI_IMAGE="${AIRLOCK_OCI_TAG:-$(sed -n 's/^tag=//p' <<<"$dry")}"
  key="$(sed -n 's/^label\.io\.airlock\.build\.key=//p' <<<"$dry")"
  start=$(date +%s)
  if [ "$(podman image inspect --format '{{index .Labels "io.airlock.build.key"}}' "$OCI_IMAGE" 2>/dev/null || true)" = "$key" ]; then
    echo "$name: reusing $OCI_IMAGE (cache key $key)"
  else
    echo "$name: building $OCI_IMAGE"
    "$OCI_REPO/packaging/oci/build.sh" --deb "$OCI_DEB" --tag "$OCI_IMAGE" >/dev/null
  fi
  echo "$name: image ready in $(( $(date +%s) - start )) s"
}
