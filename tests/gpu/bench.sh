#!/bin/sh
# The GPU benchmark (README "The GPU"): the same `remora synth` model run
# with --gpu off and --gpu auto, interleaved round by round, for a prompt
# (--prompt-tokens) and for decoding, each printing its roofline ratio;
# then the medians side by side. Run after tests/gpu/run.sh has built
# build/rel/remora with CUDA.
#
#   sh tests/gpu/bench.sh [DIR]      DIR: where the model is made (default
#                                    /tmp/remora-gpu-synth; kept if it exists)
# Environment: EXPERTS (routed experts per MoE layer, default 300: 10.5 GB of
# experts in 2 MoE layers), LAYERS (default 3), PROMPT (tokens, default 2048),
# ROUNDS (default 3), RAM (GB for the budget, default the engine's), EXTRA
# (more options for both sides, e.g. "--vram 24 --ram 32"), SIDES (default
# "off auto": the --gpu of each side; a side "auto-noguess" runs --gpu auto
# with REMORA_PREFETCH_GUESS=0, the prompt's expert reads waiting for the
# router, for the old way beside the new), PHASES (default "prompt decode"),
# WARM (decode after WARM seeded ids, --warm-tokens: with RAM for every
# expert, e.g. RAM=100 WARM=2048, decode from memory).
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=build/rel/remora
DIR=${1:-/tmp/remora-gpu-synth}
EXPERTS=${EXPERTS:-300} LAYERS=${LAYERS:-3} PROMPT=${PROMPT:-2048} ROUNDS=${ROUNDS:-3} EXTRA=${EXTRA:-}
SIDES=${SIDES:-off auto} PHASES=${PHASES:-prompt decode} WARM=${WARM:-}
WARMOPT=${WARM:+--warm-tokens $WARM}
RAMOPT=${RAM:+--ram $RAM}
[ -x "$BIN" ] || { echo "build $BIN first (sh tests/gpu/run.sh)"; exit 2; }
if [ ! -f "$DIR/config.json" ]; then
  echo "== synth: $LAYERS layers, $EXPERTS experts ($(date +%T))"
  "$BIN" synth --out "$DIR" --layers "$LAYERS" --experts "$EXPERTS" | tail -2 || exit 1
fi
L=$(mktemp -d); trap 'rm -rf "$L"' EXIT
r=1
while [ "$r" -le "$ROUNDS" ]; do
  for side in $SIDES; do
    gpu=${side%-noguess} guess=1
    [ "$gpu" != "$side" ] && guess=0
    case " $PHASES " in *" prompt "*)
    echo "== round $r, --gpu $side: prompt of $PROMPT tokens ($(date +%T))"
    # shellcheck disable=SC2086
    REMORA_PREFETCH_GUESS=$guess "$BIN" bench --model "$DIR" --prompt-tokens "$PROMPT" --gpu "$gpu" $RAMOPT $EXTRA \
      > "$L/p.$side.$r" 2>&1
    grep -E '^(prefill|read per|experts read|products|roofline|GPU|time by)' "$L/p.$side.$r" ;;
    esac
    case " $PHASES " in *" decode "*)
    echo "== round $r, --gpu $side: decode ($(date +%T))"
    # shellcheck disable=SC2086
    REMORA_PREFETCH_GUESS=$guess "$BIN" bench --model "$DIR" --tokens 8 --gpu "$gpu" $RAMOPT $WARMOPT $EXTRA \
      > "$L/d.$side.$r" 2>&1
    grep -E '^(decode|read per|roofline|GPU|time per)' "$L/d.$side.$r" ;;
    esac
  done
  r=$((r + 1))
done
med() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }
echo "== medians of $ROUNDS ($SIDES)"
for side in $SIDES; do
  ps=$(cat "$L"/p.$side.* 2> /dev/null | sed -n 's/^prefill: [0-9]* tokens in \([0-9.]*\) s.*/\1/p' | med)
  pr=$(cat "$L"/p.$side.* 2> /dev/null | sed -n 's/^roofline: max.*measured\/roofline = \([0-9.]*\).*/\1/p' | med)
  ds=$(cat "$L"/d.$side.* 2> /dev/null | sed -n 's/^decode: \([0-9.]*\) s\/token.*/\1/p' | med)
  dr=$(cat "$L"/d.$side.* 2> /dev/null | sed -n 's/^roofline: [0-9.]* s\/token.*measured\/roofline = \([0-9.]*\).*/\1/p' | med)
  dw=$(cat "$L"/d.$side.* 2> /dev/null | sed -n 's/^roofline by where.*measured\/roofline = \([0-9.]*\).*/\1/p' | med)
  echo "gpu $side: prompt $ps s (storage roofline ratio $pr); decode $ds s/token (storage roofline ratio $dr, by where each byte lives $dw)"
done
