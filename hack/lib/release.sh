# shellcheck shell=bash
# Sourced by hack/tofu.sh, hack/crossplane.sh and hack/controller-manager.sh: downloading an
# official release binary and checking it against the SHA-256 its project publishes beside it.
# Each function says why it failed on stderr (through the caller's `log`) and returns 1; the caller
# then builds from the Go module proxy instead. Connections give up after 5 s, so that a machine
# without internet falls back at once; a stalled transfer after 30 s.

# release_os and release_arch print this machine's platform as Go (and the release file names)
# spell it: linux, darwin; amd64, arm64.
release_os() {
  case "$(uname -s)" in
    Linux) echo linux ;;
    Darwin) echo darwin ;;
    *) log "no release binary for $(uname -s)"; return 1 ;;
  esac
}
release_arch() {
  case "$(uname -m)" in
    x86_64 | amd64) echo amd64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) log "no release binary for $(uname -m)"; return 1 ;;
  esac
}

# release_fetch URL FILE downloads URL into FILE with curl, else wget.
release_fetch() {
  local url=$1 file=$2 err
  if command -v curl >/dev/null 2>&1; then
    if ! err=$(curl -fsSL --connect-timeout 5 --speed-limit 10240 --speed-time 30 -o "${file}" "${url}" 2>&1); then
      log "cannot download ${url}: ${err//$'\n'/ }"
      return 1
    fi
  elif command -v wget >/dev/null 2>&1; then
    if ! err=$(wget -nv --connect-timeout=5 --read-timeout=30 --tries=1 -O "${file}" "${url}" 2>&1); then
      err=${err//$'\n'/ }
      log "cannot download ${url}: ${err:-wget failed}"
      return 1
    fi
  else
    log "cannot download ${url}: neither curl nor wget is installed"
    return 1
  fi
}

# release_sha256 FILE prints FILE's SHA-256 in hex.
release_sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | awk '{print $1}'
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | awk '{print $1}'
  else
    log "cannot check a download: neither sha256sum nor shasum is installed"
    return 1
  fi
}

# release_download URL SUMS_URL ENTRY FILE downloads URL into FILE and the checksum file SUMS_URL
# published beside it, and keeps FILE only when its SHA-256 is the one SUMS_URL lists: on the line
# naming ENTRY (a SHA256SUMS file: `<hex>  <name>` lines), or, when ENTRY is empty, the only hash
# the file holds (a `<file>.sha256`). A mismatch removes FILE and says "checksum mismatch".
release_download() {
  local url=$1 sums_url=$2 entry=$3 file=$4 want got
  release_fetch "${sums_url}" "${file}.sums" || return 1
  if [[ -n "${entry}" ]]; then
    want=$(awk -v e="${entry}" '$2 == e || $2 == "*" e { print $1; exit }' "${file}.sums")
  else
    want=$(awk 'NF { print $1; exit }' "${file}.sums")
  fi
  want=$(printf '%s' "${want}" | tr 'A-F' 'a-f')
  if [[ ! "${want}" =~ ^[0-9a-f]{64}$ ]]; then
    log "${sums_url} lists no SHA-256${entry:+ for ${entry}}; not downloading ${url}"
    return 1
  fi
  release_fetch "${url}" "${file}" || return 1
  got=$(release_sha256 "${file}") || return 1
  if [[ "${got}" != "${want}" ]]; then
    rm -f "${file}"
    log "checksum mismatch: ${url} has SHA-256 ${got}, ${sums_url} says ${want}; refused, not installed"
    return 1
  fi
}

# build_exit is the EXIT trap of a build from the Go module proxy: it removes ${work} and says when
# the build failed (some of its steps send their own messages to /dev/null).
build_exit() {
  local status=$?
  rm -rf "${work:-}"
  if ((status != 0)); then
    log "the build failed (exit status ${status})"
  fi
}
