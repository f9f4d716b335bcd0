#!/usr/bin/env bash
# Prints the path of an OpenTofu binary of the pinned version, cached per user. The first time, it
# downloads OpenTofu's release archive (tofu_<version>_<os>_<arch>.tar.gz from the GitHub release)
# and checks it against the release's tofu_<version>_SHA256SUMS (a mismatch is refused); when that
# fails (no internet, checksum mismatch, ...), it says why and builds OpenTofu from the Go module
# proxy instead (about 8 minutes on 2 cores). Later runs reuse the cached binary at once.
# MODKIND_TOFU, when it names a binary, wins. Only the path goes to stdout; what it does, to stderr.
#
# MODKIND_TOFU_RELEASES overrides the base URL of the releases (a mirror, or a test's server):
# <base>/v<version>/tofu_<version>_<os>_<arch>.tar.gz and <base>/v<version>/tofu_<version>_SHA256SUMS.
set -euo pipefail

TOFU_VERSION=1.10.7
# OpenTofu's go.mod replaces hcl/v2 with its fork; a module download does not carry replaces.
HCL_REPLACE=github.com/opentofu/hcl/v2@v2.20.2-0.20251021132045-587d123c2828
RELEASES="${MODKIND_TOFU_RELEASES:-https://github.com/opentofu/opentofu/releases/download}"

log() { echo "tofu: $*" >&2; }
# shellcheck source-path=SCRIPTDIR source=lib/release.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/release.sh"

if [[ -n "${MODKIND_TOFU:-}" && -x "${MODKIND_TOFU}" ]]; then
  echo "${MODKIND_TOFU}"
  exit 0
fi
cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/tofu/${TOFU_VERSION}"
if [[ -x "${out}/tofu" ]]; then
  echo "${out}/tofu"
  exit 0
fi

# download puts the release's tofu into ${out}: checked, unpacked and renamed into place, so that
# the cache holds the whole binary or none.
download() {
  local os arch name tmp
  os=$(release_os) && arch=$(release_arch) || return 1
  name="tofu_${TOFU_VERSION}_${os}_${arch}.tar.gz"
  mkdir -p "${out}" && tmp=$(mktemp -d "${out}/.download-XXXXXX") || return 1
  (
    trap 'rm -rf "${tmp}"' EXIT
    log "downloading OpenTofu v${TOFU_VERSION} from ${RELEASES}"
    release_download "${RELEASES}/v${TOFU_VERSION}/${name}" \
      "${RELEASES}/v${TOFU_VERSION}/tofu_${TOFU_VERSION}_SHA256SUMS" "${name}" "${tmp}/${name}" || exit 1
    mkdir "${tmp}/x"
    if ! tar -xzf "${tmp}/${name}" -C "${tmp}/x" || [[ ! -f "${tmp}/x/tofu" ]]; then
      log "${name} holds no tofu"
      exit 1
    fi
    chmod 0755 "${tmp}/x/tofu" && mv "${tmp}/x/tofu" "${out}/tofu"
  )
}

build() {
  work=$(mktemp -d)
  trap build_exit EXIT
  mkdir -p "${out}"
  (
    cd "${work}"
    go mod init modkind.io/testbin/tofu >/dev/null 2>&1
    go mod edit -require="github.com/opentofu/opentofu@v${TOFU_VERSION}"
    go mod edit -replace="github.com/hashicorp/hcl/v2@v2.20.1=${HCL_REPLACE}"
    go get "github.com/opentofu/opentofu/cmd/tofu@v${TOFU_VERSION}" >&2
    CGO_ENABLED=0 go build -trimpath -o "${out}/tofu.tmp" github.com/opentofu/opentofu/cmd/tofu >&2
  )
  mv "${out}/tofu.tmp" "${out}/tofu"
}

started=${SECONDS}
if download; then
  log "downloaded OpenTofu v${TOFU_VERSION} into ${out} in $((SECONDS - started)) s"
else
  log "download failed after $((SECONDS - started)) s; building OpenTofu v${TOFU_VERSION} from the Go module proxy into ${out} instead (first run only, ~8 min on 2 cores)"
  build
  log "built in $((SECONDS - started)) s"
fi
echo "${out}/tofu"
