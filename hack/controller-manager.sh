#!/usr/bin/env bash
# Prints the path of kube-controller-manager (the Job controller and the garbage collector for the
# runner tests), building it from the Go module proxy into the envtest cache the first time
# (about 10 minutes on 2 cores; later runs: instant). Same release and wrapper module as
# hack/testbin.sh's kube-apiserver.
set -euo pipefail

K8S_VERSION=1.36.3
STAGING_VERSION=0.36.3
ETCD_VERSION=3.6.5

cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/testbin/k8s-${K8S_VERSION}-etcd-${ETCD_VERSION}"
bin="${out}/kube-controller-manager"
if [[ -x "${bin}" ]]; then
  echo "${bin}"
  exit 0
fi
mkdir -p "${out}"
echo "controller-manager: building kube-controller-manager v${K8S_VERSION} from the Go module proxy into ${out} (first run only, ~10 min)" >&2
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
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
echo "controller-manager: built in $(( $(date +%s) - start ))s" >&2
echo "${bin}"
