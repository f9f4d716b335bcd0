#!/usr/bin/env bash
# Prints the path of the helm CLI of the pinned version (the version of the Helm library go.mod
# requires, which renders the chart in the unit tests), cached per user. The first time, it builds
# helm's own command (helm.sh/helm/v3/cmd/helm) from the Go module proxy, checked by Go's checksum
# database (about 3 minutes on 2 cores); later runs reuse the cached binary at once. Helm publishes
# its release binaries only inside tarballs (get.helm.sh), so nothing is downloaded but modules.
# HELM_BIN, when it names a binary, wins. Only the path goes to stdout; what it does, to stderr.
set -euo pipefail

HELM_VERSION=3.21.0

log() { echo "helm: $*" >&2; }

if [[ -n "${HELM_BIN:-}" && -x "${HELM_BIN}" ]]; then
  echo "${HELM_BIN}"
  exit 0
fi
cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/helm/${HELM_VERSION}"
if [[ -x "${out}/helm" ]]; then
  echo "${out}/helm"
  exit 0
fi

started=${SECONDS}
log "building helm v${HELM_VERSION} from the Go module proxy into ${out} (first run only, ~3 min on 2 cores)"
mkdir -p "${out}"
tmp=$(mktemp -d "${out}/.build-XXXXXX")
trap 'rm -rf "${tmp}"' EXIT
# go install pkg@version builds with helm's own go.mod; the version is stamped as helm's release
# build does, so that `helm version` says which it is.
CGO_ENABLED=0 GOBIN="${tmp}" GOFLAGS=-mod=mod go install -trimpath \
  -ldflags "-X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}" \
  "helm.sh/helm/v3/cmd/helm@v${HELM_VERSION}" >&2
mv "${tmp}/helm" "${out}/helm"
log "built in $((SECONDS - started)) s"
echo "${out}/helm"
