#!/usr/bin/env bash
# Prints a directory holding kube-apiserver and etcd for envtest, building them from the Go module
# proxy into a per-user cache the first time (about 12 minutes on 2 cores; later runs: instant).
# A KUBEBUILDER_ASSETS that already holds both binaries is used as it is.
set -euo pipefail

K8S_VERSION=1.36.3
STAGING_VERSION=0.36.3
ETCD_VERSION=3.6.5

if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "${KUBEBUILDER_ASSETS}/kube-apiserver" && -x "${KUBEBUILDER_ASSETS}/etcd" ]]; then
  echo "${KUBEBUILDER_ASSETS}"
  exit 0
fi

cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/testbin/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
mkdir -p "${out}"
log() { echo "testbin: $*" >&2; }

build_etcd() {
  local work; work=$(mktemp -d)
  (
    cd "${work}"
    go mod init modkind.io/testbin/etcd >/dev/null 2>&1
    go mod edit -require="go.etcd.io/etcd/server/v3@v${ETCD_VERSION}"
    for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do
      go mod edit -replace="go.etcd.io/etcd/${m}=go.etcd.io/etcd/${m}@v${ETCD_VERSION}"
    done
    go mod tidy -e >/dev/null 2>&1 || true
    go get "go.etcd.io/etcd/server/v3@v${ETCD_VERSION}" >&2
    CGO_ENABLED=0 go build -trimpath -o "${out}/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
  )
  mv "${out}/etcd.tmp" "${out}/etcd"
  rm -rf "${work}"
}

build_apiserver() {
  local work; work=$(mktemp -d)
  (
    cd "${work}"
    go mod init modkind.io/testbin/apiserver >/dev/null 2>&1
    go mod edit -require="k8s.io/kubernetes@v${K8S_VERSION}"
    # k8s.io/kubernetes replaces its staging modules with local folders that a module download does
    # not carry; point each at the published module of the same release instead.
    gomod=$(go mod download -json "k8s.io/kubernetes@v${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    for m in $(grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "${gomod}" | awk '{print $1}'); do
      go mod edit -replace="${m}=${m}@v${STAGING_VERSION}"
    done
    go get "k8s.io/kubernetes/cmd/kube-apiserver@v${K8S_VERSION}" >&2
    # A source build reports version v0.0.0-master, which version-checking clients cannot parse.
    CGO_ENABLED=0 go build -trimpath -ldflags "-X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} \
      -X k8s.io/component-base/version.gitMajor=${K8S_VERSION%%.*} \
      -X k8s.io/component-base/version.gitMinor=$(echo ${K8S_VERSION} | cut -d. -f2)" \
      -o "${out}/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2
  )
  mv "${out}/kube-apiserver.tmp" "${out}/kube-apiserver"
  rm -rf "${work}"
}

if [[ ! -x "${out}/etcd" ]]; then
  log "building etcd v${ETCD_VERSION} from the Go module proxy into ${out} (first run only, ~3 min)"
  build_etcd
fi
if [[ ! -x "${out}/kube-apiserver" ]]; then
  log "building kube-apiserver v${K8S_VERSION} from the Go module proxy into ${out} (first run only, ~9 min)"
  build_apiserver
fi
echo "${out}"
