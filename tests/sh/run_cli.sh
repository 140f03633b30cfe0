#!/bin/sh
# `remora run` end to end on the fixture models: the golden greedy
# continuation (read back from --trace), the answer alone on stdout, the
# prompt from stdin, Ctrl-C (SIGINT) stopping at a token boundary with what
# was generated kept, transcripts continued across runs, and bad input.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
[ -d "$FX/k3-tiny" ] || { echo "fixtures missing: $FX"; exit 1; }
BIN=build/rel/remora
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
meta() { python3 -c "import json,sys;p=json.load(open('$FX/$1/goldens/meta.json'))['prompts'][$2];print($3)"; }
trace_ids() { python3 -c "import json;print(' '.join(str(r['id']) for r in map(json.loads, open('$1')) if r.get('kind') == 'token'))"; }

for m in k3-tiny kl-tiny; do
  text=$(meta $m 0 "p['text']")
  want=$(meta $m 0 "' '.join(map(str,p['greedy']['tokens']))")
  $BIN run --model "$FX/$m" --prompt "$text" --max-new 24 --trace "$T/tr" > "$T/out" 2> "$T/err" || { echo "FAIL $m run"; cat "$T/err"; fail=1; }
  got=$(trace_ids "$T/tr")
  [ "$got" = "$want" ] && echo "ok   $m golden continuation" || { echo "FAIL $m: got $got"; echo "want $want"; fail=1; }
  grep -q "reused, .* prefilled in" "$T/err" || { echo "FAIL $m summary line"; fail=1; }
  # the same prompt from stdin gives the same answer
  printf '%s' "$text" | $BIN run --model "$FX/$m" --prompt - --max-new 24 > "$T/out2" 2>/dev/null
  cmp -s "$T/out" "$T/out2" && echo "ok   $m --prompt -" || { echo "FAIL $m stdin prompt"; fail=1; }
done

# chat: the K3 chat golden through --system and --prompt
want=$(meta k3-tiny 1 "' '.join(map(str,p['greedy']['tokens']))")
$BIN run --model "$FX/k3-tiny" --system "You are Kimi, a helpful assistant." \
  --prompt "Explain linear attention in one short sentence." --max-new 24 --trace "$T/tr" > "$T/out" 2> "$T/err"
[ "$(trace_ids "$T/tr")" = "$want" ] && echo "ok   k3 chat golden" || { echo "FAIL k3 chat golden"; fail=1; }

# Ctrl-C: stops at the next token, keeps the text, exits 130
rm -f "$T/tr"
$BIN run --model "$FX/k3-tiny" --prompt "hello" --max-new 100000 --trace "$T/tr" > "$T/out" 2> "$T/err" &
pid=$!
decoded() { n=$(grep -c '"prefill":false' "$T/tr" 2>/dev/null); echo "${n:-0}"; }
i=0; while [ $i -lt 200 ] && [ "$(decoded)" -lt 5 ]; do sleep 0.05; i=$((i+1)); done
kill -INT $pid; wait $pid; rc=$?
n=$(grep -c '"prefill":false' "$T/tr")
[ $rc = 130 ] && grep -q "(stopped)" "$T/err" && [ "$n" -ge 5 ] && [ "$n" -lt 100000 ] && [ -s "$T/out" ] \
  && echo "ok   Ctrl-C stops with $n tokens kept" || { echo "FAIL Ctrl-C: rc=$rc n=$n"; cat "$T/err"; fail=1; }

# transcripts continue and are valid JSONL
$BIN run --model "$FX/k3-tiny" --prompt "first" --max-new 4 --transcript "$T/chat.jsonl" >/dev/null 2>&1
$BIN run --model "$FX/k3-tiny" --prompt "second" --max-new 4 --transcript "$T/chat.jsonl" >/dev/null 2>&1
python3 -c "
import json
rows=[json.loads(l) for l in open('$T/chat.jsonl')]
assert [r['role'] for r in rows]==['user','assistant','user','assistant'], rows
assert rows[2]['content']=='second'" && echo "ok   transcript continued" || { echo "FAIL transcript"; fail=1; }
ls "$T" | grep -q 'chat.jsonl.tmp' && { echo "FAIL temp file left"; fail=1; }

# bad input: exit 2 and a message
$BIN run --model "$FX/k3-tiny" --prompt x --max-new 0 2> "$T/err"; [ $? = 2 ] && grep -q "max-new" "$T/err" || { echo "FAIL bad --max-new"; fail=1; }
$BIN run --model "$T/none" --prompt x 2> "$T/err"; [ $? = 2 ] && grep -q "config.json" "$T/err" || { echo "FAIL missing model"; fail=1; }
echo '{"role":"user"' > "$T/bad.jsonl"
$BIN run --model "$FX/k3-tiny" --prompt x --transcript "$T/bad.jsonl" 2> "$T/err"; [ $? = 2 ] && grep -q "bad.jsonl:1" "$T/err" || { echo "FAIL bad transcript"; cat "$T/err"; fail=1; }
$BIN run --model "$FX/k3-tiny" --prompt x --spec maybe 2> "$T/err"; [ $? = 2 ] || { echo "FAIL bad --spec"; fail=1; }
exit $fail
