#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, if any is missing.
# Used by `make deps` (and so by `make run` / `make test`) and by .ci/run.
#   - libopus-dev, pkg-config: hraban/opus (cgo, built with -tags nolibopusfile)
#   - libpocketsphinx-dev, pocketsphinx-en-us: the embedded offline recognizer (cgo)
#   - espeak-ng: the embedded offline speech synthesizer, and test fixtures
#   - sox, opus-tools: tests that check audio files
#   - chromium: the real-browser end-to-end test of the web client
#   - iproute2: `ip` for loopback-only network namespaces in browser tests
# With the argument `test` (make test, CI) it also installs what only the
# tests start, never `make run`:
#   - redis-server: the shared store of a cluster of gateways
#   - coturn: a real TURN server for the relay-only media tests
#   - flite, festival + festvox voices: eot-make's voices from human recordings (its test skips without them)
set -euo pipefail

pkgs=(libopus-dev pkg-config libpocketsphinx-dev libsphinxbase-dev pocketsphinx pocketsphinx-en-us espeak-ng sox opus-tools chromium iproute2)
if [ "${1:-}" = test ]; then
  pkgs+=(redis-server coturn flite festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "vera-gateway needs these system packages: ${missing[*]}" >&2
  echo "install them with your package manager (Debian/Ubuntu: apt-get install ${missing[*]})" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "vera-gateway needs: ${missing[*]}" >&2
    echo "run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "installing: ${missing[*]}" >&2
updated=0
for attempt in 1 2 3 4 5 6; do
  # Another apt may hold the lock for a while (unattended upgrades on a fresh machine).
  if [ "$updated" -eq 0 ]; then
    "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 update -qq && updated=1 || { sleep 10; continue; }
  fi
  if "${sudo[@]}" apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 "${missing[@]}"; then
    exit 0
  fi
  echo "apt-get install failed (attempt $attempt), retrying" >&2
  sleep 10
done
echo "could not install: ${missing[*]}" >&2
exit 1
