#!/usr/bin/env bash
# Prints the path of kube-controller-manager (the Job controller and the garbage collector for the
# runner tests) of the same release as hack/testbin.sh's kube-apiserver, cached per user in the
# envtest cache. The first time, it downloads the Kubernetes release binary
# (dl.k8s.io/release/v<version>/bin/<os>/<arch>/kube-controller-manager) and checks it against the
# kube-controller-manager.sha256 published beside it (a mismatch is refused); when that fails (no
# internet, checksum mismatch, ...), it says why and builds it from the Go module proxy instead
# (about 2 minutes on 2 cores after hack/testbin.sh built kube-apiserver, up to 10 without). Later
# runs reuse the cached binary at once. Only the path goes to stdout; what it does, to stderr.
#
# MODKIND_KCM_RELEASES overrides the base URL of the releases (a mirror, or a test's server):
# <base>/v<version>/bin/<os>/<arch>/kube-controller-manager and ...kube-controller-manager.sha256.
set -euo pipefail

K8S_VERSION=1.36.3
STAGING_VERSION=0.36.3
ETCD_VERSION=3.6.5
RELEASES="${MODKIND_KCM_RELEASES:-https://dl.k8s.io/release}"

log() { echo "controller-manager: $*" >&2; }
# shellcheck source-path=SCRIPTDIR source=lib/release.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/release.sh"

cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/testbin/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
bin="${out}/kube-controller-manager"
if [[ -x "${bin}" ]]; then
  echo "${bin}"
  exit 0
fi

# download puts the release's kube-controller-manager at ${bin}: checked, then renamed into place,
# so that the cache holds the whole binary or none.
download() {
  local os arch url tmp
  os=$(release_os) && arch=$(release_arch) || return 1
  url="${RELEASES}/v${K8S_VERSION}/bin/${os}/${arch}/kube-controller-manager"
  mkdir -p "${out}" && tmp=$(mktemp -d "${out}/.download-XXXXXX") || return 1
  (
    trap 'rm -rf "${tmp}"' EXIT
    log "downloading kube-controller-manager v${K8S_VERSION} from ${RELEASES}"
    release_download "${url}" "${url}.sha256" "" "${tmp}/kube-controller-manager" || exit 1
    chmod 0755 "${tmp}/kube-controller-manager" && mv "${tmp}/kube-controller-manager" "${bin}"
  )
}

build() {
  work=$(mktemp -d)
  trap build_exit EXIT
  mkdir -p "${out}"
  (
    cd "${work}"
    go mod init modkind.io/testbin/controllermanager >/dev/null 2>&1
    go mod edit -require="k8s.io/kubernetes@v${K8S_VERSION}"
    # k8s.io/kubernetes replaces its staging modules with local folders that a module download does
    # not carry; point each at the published module of the same release instead.
    gomod=$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    for m in $(grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "${gomod}" | awk '{print $1}'); do
      go mod edit -replace="${m}=${m}@v${STAGING_VERSION}"
    done
    go get "k8s.io/kubernetes/cmd/kube-controller-manager@v${K8S_VERSION}" >&2
    CGO_ENABLED=0 go build -trimpath -ldflags "-X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} \
      -X k8s.io/component-base/version.gitMajor=${K8S_VERSION%%.*} \
      -X k8s.io/component-base/version.gitMinor=$(echo ${K8S_VERSION} | cut -d. -f2)" \
      -o "${bin}.tmp" k8s.io/kubernetes/cmd/kube-controller-manager >&2
  )
  mv "${bin}.tmp" "${bin}"
}

started=${SECONDS}
if download; then
  log "downloaded kube-controller-manager v${K8S_VERSION} into ${out} in $((SECONDS - started)) s"
else
  log "download failed after $((SECONDS - started)) s; building kube-controller-manager v${K8S_VERSION} from the Go module proxy into ${out} instead (first run only, 2 to 10 min on 2 cores)"
  build
  log "built in $((SECONDS - started)) s"
fi
echo "${bin}"
