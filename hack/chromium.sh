#!/usr/bin/env bash
# Prints the path of a Chromium for the dashboard's browser test (test/e2e, chromedp). CHROMIUM_BIN,
# when it names a binary, wins; then a chromium already on PATH; otherwise it installs Debian's
# `chromium` package (about 118 MiB, without recommends) with apt-get, which needs root. The test
# runs it headless with --no-sandbox (as root Chromium refuses its sandbox). Only the path goes to
# stdout; what it does, to stderr.
set -euo pipefail

log() { echo "chromium: $*" >&2; }

if [[ -n "${CHROMIUM_BIN:-}" && -x "${CHROMIUM_BIN}" ]]; then
  echo "${CHROMIUM_BIN}"
  exit 0
fi
for name in chromium chromium-browser; do
  if path="$(command -v "${name}")"; then
    echo "${path}"
    exit 0
  fi
done
if [[ "$(id -u)" != 0 ]]; then
  log "no chromium on PATH, and installing Debian's chromium needs root: set CHROMIUM_BIN"
  exit 1
fi
log "installing Debian's chromium (apt-get, without recommends)"
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >&2
command -v chromium
