#!/bin/sh
# Speculation on a synthetic K3-width model streamed from disk (issue #7's
# benchmark): paired runs of `remora bench --prompt` with --spec off and auto,
# on a repetitive prompt and a non-repetitive one, median of N rounds.
#
# `remora synth` models continue along a fixed cycle of printable bytes, so:
#   non-repetitive: a plain sentence; the continuation is new text, and the
#     drafts the prompt offers (single-byte matches) are wrong;
#   repetitive: the sentence, the model's own continuation of it, then the
#     sentence again; the continuation is text the prompt holds, as when a
#     model re-quotes code or a list it was given.
# Prints tokens/s off vs auto, the ratio, acceptance, and GB read per emitted
# token. This is a benchmark, not a test: it takes minutes and judges nothing.
#
# usage: sh tests/bench/spec_synth.sh MODEL_DIR [RAM_GB|default] [TOKENS] [ROUNDS]
set -eu
M=${1:?usage: spec_synth.sh MODEL_DIR [RAM_GB|default] [TOKENS] [ROUNDS]}
RAM=${2:-3.5}; N=${3:-24}; ROUNDS=${4:-3}
BIN=${REMORA_BIN:-build/rel/remora}
[ "$RAM" = default ] && RAMOPT="" || RAMOPT="--ram $RAM"
P="The quick brown fox jumps over the lazy dog."
T=$($BIN run --model "$M" $RAMOPT --prompt "$P" --max-new "$N" --spec off 2>/dev/null)
REP="$P$T$P"
OUT=$(mktemp); trap 'rm -f "$OUT"' EXIT
for r in $(seq "$ROUNDS"); do
  for kind in repetitive non-repetitive; do
    [ $kind = repetitive ] && prompt=$REP || prompt=$P
    for spec in off auto; do
      $BIN bench --model "$M" $RAMOPT --tokens "$N" --device-seconds 1 --prompt "$prompt" --spec $spec --json \
        2>/dev/null | tail -1 | sed "s/^/$kind $spec /" >> "$OUT"
    done
  done
done
python3 - "$OUT" "$M" "$RAM" "$N" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kind, spec, js = line.split(" ", 2)
    rows.setdefault((kind, spec), []).append(json.loads(js))
print(f"model {sys.argv[2]}, --ram {sys.argv[3]}, {sys.argv[4]} tokens per run")
for kind in ("repetitive", "non-repetitive"):
    off, auto = rows[(kind, "off")], rows[(kind, "auto")]
    ratios = [a["tokens_per_s"] / o["tokens_per_s"] for o, a in zip(off, auto)]
    gb = lambda d: d["gb_per_token_spine"] + d["gb_per_token_experts"]
    dr = sum(a["spec_drafted"] for a in auto); ac = sum(a["spec_accepted"] for a in auto)
    print(f"{kind:15s} off {statistics.median(o['tokens_per_s'] for o in off):.3f} tok/s, "
          f"auto {statistics.median(a['tokens_per_s'] for a in auto):.3f} tok/s; "
          f"paired auto/off {', '.join(f'{x:.2f}' for x in ratios)} -> median {statistics.median(ratios):.2f}x; "
          f"accepted {ac}/{dr} drafted ({100 * ac / dr if dr else 0:.0f}%); GB read per emitted token "
          f"off {statistics.median(gb(o) for o in off):.3f}, auto {statistics.median(gb(a) for a in auto):.3f}")
PY
