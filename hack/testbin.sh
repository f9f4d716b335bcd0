#!/usr/bin/env bash
# Prints a directory holding kube-apiserver and etcd for envtest. The first time, it downloads the
# release archive controller-runtime's setup-envtest uses (controller-tools' envtest-releases.yaml
# index, SHA-512 checked) and, when that fails (no internet), builds both from the Go module proxy
# instead (about 12 minutes on 2 cores). Later runs reuse either cache at once. A KUBEBUILDER_ASSETS
# that already holds both binaries is used as it is. Only the directory goes to stdout, for
# $(hack/testbin.sh); what it does goes to stderr.
#
#   hack/testbin.sh                  # the directory, downloading or building once
#   hack/testbin.sh --download-only  # only the download (into $MODKIND_CACHE); fails, not builds
#
# MODKIND_ENVTEST_INDEX overrides the index URL (a mirror; file:// works).
set -euo pipefail

K8S_VERSION=1.36.3
STAGING_VERSION=0.36.3
ETCD_VERSION=3.6.5
ENVTEST_INDEX="${MODKIND_ENVTEST_INDEX:-https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml}"

download_only=false
case "${1:-}" in
  "") ;;
  --download-only) download_only=true ;;
  *) echo "usage: $0 [--download-only]" >&2; exit 2 ;;
esac

log() { echo "testbin: $*" >&2; }
complete() { [[ -x "$1/kube-apiserver" && -x "$1/etcd" ]]; }

if ! ${download_only} && [[ -n "${KUBEBUILDER_ASSETS:-}" ]] && complete "${KUBEBUILDER_ASSETS}"; then
  echo "${KUBEBUILDER_ASSETS}"
  exit 0
fi

cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/testbin/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
if ! ${download_only} && complete "${out}"; then
  echo "${out}"
  exit 0
fi
platform="$(go env GOOS)-$(go env GOARCH)"
downloaded="${cache}/testbin/envtest-v${K8S_VERSION}-${platform}"
if complete "${downloaded}"; then
  echo "${downloaded}"
  exit 0
fi

# download fetches envtest-v<version>-<os>-<arch>.tar.gz as setup-envtest does: its hash (SHA-512)
# and URL from the index, then the archive, into $1. Connections give up after 5 s, so that a
# machine without internet falls back at once; a stalled transfer after 30 s.
download() {
  local dest=$1 archive="envtest-v${K8S_VERSION}-${platform}.tar.gz" tmp hash url
  if ! command -v curl >/dev/null; then
    log "cannot download: no curl"
    return 1
  fi
  mkdir -p "${cache}/testbin"
  tmp=$(mktemp -d "${cache}/testbin/.download-XXXXXX")
  # The subshell's trap removes the partial download whatever happens.
  (
    trap 'rm -rf "${tmp}"' EXIT
    local_curl() { curl -fsSL --connect-timeout 5 --speed-limit 10240 --speed-time 30 "$@"; }
    log "downloading ${archive} (kube-apiserver, etcd) as setup-envtest does; index ${ENVTEST_INDEX}"
    if ! local_curl --max-time 60 -o "${tmp}/index.yaml" "${ENVTEST_INDEX}"; then
      log "cannot fetch the envtest release index ${ENVTEST_INDEX}"
      exit 1
    fi
    # The index maps versions to archives, each with `hash:` (SHA-512, hex) and `selfLink:`.
    read -r hash url < <(awk -v want="${archive}:" '
      $1 == want { found = 1; next }
      found && $1 == "hash:" { h = $2 }
      found && $1 == "selfLink:" { u = $2 }
      found && $1 ~ /:$/ && $1 != "hash:" && $1 != "selfLink:" { exit }
      found && h != "" && u != "" { exit }
      END { if (found && h != "" && u != "") print h, u }' "${tmp}/index.yaml") || true
    if [[ ! "${hash:-}" =~ ^[0-9a-f]{128}$ || -z "${url:-}" ]]; then
      log "the envtest index lists no ${archive} with a SHA-512 hash"
      exit 1
    fi
    if ! local_curl -o "${tmp}/${archive}" "${url}"; then
      log "cannot download ${url}"
      exit 1
    fi
    if ! echo "${hash}  ${tmp}/${archive}" | sha512sum -c --status -; then
      log "${archive} does not match the SHA-512 of the index; not using it"
      exit 1
    fi
    mkdir "${tmp}/x" "${tmp}/out"
    tar -xzf "${tmp}/${archive}" -C "${tmp}/x"
    for b in kube-apiserver etcd kubectl; do
      f=$(find "${tmp}/x" -type f -name "${b}" | head -n1)
      if [[ -n "${f}" ]]; then
        install -m 0555 "${f}" "${tmp}/out/${b}"
      fi
    done
    if ! complete "${tmp}/out"; then
      log "${archive} holds no kube-apiserver and etcd"
      exit 1
    fi
    # Renamed whole: the directory is complete or absent.
    rm -rf "${dest}"
    mv "${tmp}/out" "${dest}"
  )
}

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

started=${SECONDS}
if download "${downloaded}"; then
  log "downloaded kube-apiserver and etcd v${K8S_VERSION} into ${downloaded} in $((SECONDS - started)) s"
  echo "${downloaded}"
  exit 0
fi
if ${download_only}; then
  log "download failed after $((SECONDS - started)) s (--download-only: not building)"
  exit 1
fi
log "download failed after $((SECONDS - started)) s; building kube-apiserver v${K8S_VERSION} and etcd v${ETCD_VERSION} from the Go module proxy into ${out} instead (first run only, ~12 min on 2 cores)"
mkdir -p "${out}"
if [[ ! -x "${out}/etcd" ]]; then
  log "building etcd v${ETCD_VERSION} (~3 min)"
  build_etcd
fi
if [[ ! -x "${out}/kube-apiserver" ]]; then
  log "building kube-apiserver v${K8S_VERSION} (~9 min)"
  build_apiserver
fi
log "built into ${out} in $((SECONDS - started)) s"
echo "${out}"
