#!/bin/sh
# `remora logits` end to end: the goldens' prompts through the real binary
# (release and ASan builds), and bad input giving exit status 2 with a clear
# message and no sanitizer report.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
[ -d "$FX/k3-tiny" ] || { echo "fixtures missing: $FX"; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
check() { # name, expected rc, expected stderr text, command...
  name=$1 want=$2 text=$3; shift 3
  "$@" >"$T/out" 2>"$T/err"; rc=$?
  if [ "$rc" != "$want" ] || { [ -n "$text" ] && ! grep -qF -- "$text" "$T/err"; } || grep -q Sanitizer "$T/err"; then
    echo "FAIL $name: rc=$rc (want $want)"; cat "$T/err"; fail=1
  else echo "ok   $name"; fi
}
# a good run writes T*vocab floats
python3 -c "import json;print(' '.join(map(str,json.load(open('$FX/kl-tiny/goldens/meta.json'))['prompts'][0]['prompt_ids'])))" > "$T/ids"
for bin in build/rel/remora build/asan/remora; do
  [ -x "$bin" ] || continue
  check "$bin ok" 0 "" "$bin" logits --model "$FX/kl-tiny" --ids-file "$T/ids" --out "$T/l.f32" --routes "$T/r.json"
  [ "$(stat -c %s "$T/l.f32")" = $((11 * 3072 * 4)) ] || { echo "FAIL logits size"; fail=1; }
  python3 -c "import json;d=json.load(open('$T/r.json'));assert sorted(d['layers'])==['1','2','3','4','5','6'];assert len(d['layers']['1'])==11" || fail=1
  # bad inputs
  echo "1 2 x" > "$T/badids"
  check "$bin bad ids" 2 "bad text after id 2" "$bin" logits --model "$FX/kl-tiny" --ids-file "$T/badids" --out "$T/o"
  echo "1 99999" > "$T/oob"
  check "$bin out-of-vocab id" 2 "outside the vocabulary" "$bin" logits --model "$FX/kl-tiny" --ids-file "$T/oob" --out "$T/o"
  check "$bin missing model" 2 "config.json: cannot open" "$bin" logits --model "$T/nowhere" --ids-file "$T/ids" --out "$T/o"
  mkdir -p "$T/m"; for f in "$FX/kl-tiny"/*; do ln -sf "$f" "$T/m/"; done
  rm "$T/m/model-00002-of-00004.safetensors"
  head -c 100000 "$FX/kl-tiny/model-00002-of-00004.safetensors" > "$T/m/model-00002-of-00004.safetensors"
  check "$bin truncated shard" 2 "model-00002-of-00004.safetensors: tensor" "$bin" logits --model "$T/m" --ids-file "$T/ids" --out "$T/o"
  rm "$T/m/config.json"; echo '{"model_type": "kimi_linear", "vocab_size": 3072' > "$T/m/config.json"
  check "$bin bad config" 2 "config.json: not valid JSON" "$bin" logits --model "$T/m" --ids-file "$T/ids" --out "$T/o"
  check "$bin usage" 2 "usage: remora logits" "$bin" logits --model "$FX/kl-tiny"
  rm -rf "$T/m"
done
exit $fail
