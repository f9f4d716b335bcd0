#!/usr/bin/env bash
# Prints the path of a Crossplane core binary, building it from the Go module proxy into a per-user
# cache the first time (about 6 minutes on 2 cores; later runs: instant). CROSSPLANE_BIN, when it
# names a binary, wins. The end-to-end test takes Crossplane's CRDs from the module of the version
# the binary reports (`crossplane --version`).
set -euo pipefail

CROSSPLANE_VERSION=2.3.0

if [[ -n "${CROSSPLANE_BIN:-}" && -x "${CROSSPLANE_BIN}" ]]; then
  echo "${CROSSPLANE_BIN}"
  exit 0
fi
cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/crossplane/${CROSSPLANE_VERSION}"
if [[ ! -x "${out}/crossplane" ]]; then
  echo "crossplane: building Crossplane core v${CROSSPLANE_VERSION} from the Go module proxy into ${out} (first run only, ~6 min)" >&2
  mkdir -p "${out}"
  work=$(mktemp -d)
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
  rm -rf "${work}"
fi
echo "${out}/crossplane"
