#!/usr/bin/env bash
# Prints the path of an OpenTofu binary, building it from the Go module proxy into a per-user
# cache the first time (about 6 minutes on 2 cores). MODKIND_TOFU, when it names a binary, wins.
set -euo pipefail

TOFU_VERSION=1.10.7
# OpenTofu's go.mod replaces hcl/v2 with its fork; a module download does not carry replaces.
HCL_REPLACE=github.com/opentofu/hcl/v2@v2.20.2-0.20251021132045-587d123c2828

if [[ -n "${MODKIND_TOFU:-}" && -x "${MODKIND_TOFU}" ]]; then
  echo "${MODKIND_TOFU}"
  exit 0
fi
cache="${MODKIND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/modkind}"
out="${cache}/tofu/${TOFU_VERSION}"
if [[ ! -x "${out}/tofu" ]]; then
  echo "tofu: building OpenTofu v${TOFU_VERSION} from the Go module proxy into ${out} (first run only, ~6 min)" >&2
  mkdir -p "${out}"
  work=$(mktemp -d)
  (
    cd "${work}"
    go mod init modkind.io/testbin/tofu >/dev/null 2>&1
    go mod edit -require="github.com/opentofu/opentofu@v${TOFU_VERSION}"
    go mod edit -replace="github.com/hashicorp/hcl/v2@v2.20.1=${HCL_REPLACE}"
    go get "github.com/opentofu/opentofu/cmd/tofu@v${TOFU_VERSION}" >&2
    CGO_ENABLED=0 go build -trimpath -o "${out}/tofu.tmp" github.com/opentofu/opentofu/cmd/tofu >&2
  )
  mv "${out}/tofu.tmp" "${out}/tofu"
  rm -rf "${work}"
fi
echo "${out}/tofu"
