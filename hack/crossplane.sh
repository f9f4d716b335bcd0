#!/usr/bin/env bash
# Prints the path of a Crossplane core binary of the pinned version, cached per user. The first
# time, it downloads Crossplane's release binary (releases.crossplane.io/stable/v<version>/bin/
# <os>_<arch>/crossplane) and checks it against the crossplane.sha256 published beside it (a
# mismatch is refused); when that fails (no internet, checksum mismatch, ...), it says why and
# builds Crossplane from the Go module proxy instead (about 6 minutes on 2 cores). Later runs reuse
# the cached binary at once. CROSSPLANE_BIN, when it names a binary, wins. The end-to-end test takes
# Crossplane's CRDs from the module of the version the binary reports (`crossplane --version`).
# Only the path goes to stdout; what it does, to stderr.
#
# MODKIND_CROSSPLANE_RELEASES overrides the base URL of the releases (a mirror, or a test's server):
# <base>/v<version>/bin/<os>_<arch>/crossplane and .../crossplane.sha256.
set -euo pipefail

CROSSPLANE_VERSION=2.3.0
RELEASES="${MODKIND_CROSSPLANE_RELEASES:-https://releases.crossplane.io/stable}"

log() { echo "crossplane: $*" >&2; }
# shellcheck source-path=SCRIPTDIR source=lib/release.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/release.sh"

if [[ -n "${CROSSPLANE_BIN:-}" && -x "${CROSSPLANE_BIN}" ]]; then
  echo "${CROSSPLANE_BIN}"
  exit 0
fi
cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/crossplane/${CROSSPLANE_VERSION}"
if [[ -x "${out}/crossplane" ]]; then
  echo "${out}/crossplane"
  exit 0
fi

# download puts the release's crossplane into ${out}: checked, then renamed into place, so that the
# cache holds the whole binary or none.
download() {
  local os arch url tmp
  os=$(release_os) && arch=$(release_arch) || return 1
  url="${RELEASES}/v${CROSSPLANE_VERSION}/bin/${os}_${arch}/crossplane"
  mkdir -p "${out}" && tmp=$(mktemp -d "${out}/.download-XXXXXX") || return 1
  (
    trap 'rm -rf "${tmp}"' EXIT
    log "downloading Crossplane v${CROSSPLANE_VERSION} from ${RELEASES}"
    release_download "${url}" "${url}.sha256" "" "${tmp}/crossplane" || exit 1
    chmod 0755 "${tmp}/crossplane" && mv "${tmp}/crossplane" "${out}/crossplane"
  )
}

build() {
  work=$(mktemp -d)
  trap build_exit EXIT
  mkdir -p "${out}"
  (
    cd "${work}"
    go mod init modkind.io/testbin/crossplane >/dev/null 2>&1
    # Crossplane's go.mod replaces its apis/v2 module with ./apis, which a module download does not
    # carry. Without the replace, Go uses the pseudo-version Crossplane also requires, which the
    # proxy serves (its code is that of the apis/v2.3.1 tag).
    go mod edit -require="github.com/crossplane/crossplane/v2@v${CROSSPLANE_VERSION}"
    go get "github.com/crossplane/crossplane/v2/cmd/crossplane@v${CROSSPLANE_VERSION}" >&2
    CGO_ENABLED=0 go build -trimpath \
      -ldflags "-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=v${CROSSPLANE_VERSION}" \
      -o "${out}/crossplane.tmp" github.com/crossplane/crossplane/v2/cmd/crossplane >&2
  )
  mv "${out}/crossplane.tmp" "${out}/crossplane"
}

started=${SECONDS}
if download; then
  log "downloaded Crossplane v${CROSSPLANE_VERSION} into ${out} in $((SECONDS - started)) s"
else
  log "download failed after $((SECONDS - started)) s; building Crossplane core v${CROSSPLANE_VERSION} from the Go module proxy into ${out} instead (first run only, ~6 min on 2 cores)"
  build
  log "built in $((SECONDS - started)) s"
fi
echo "${out}/crossplane"
