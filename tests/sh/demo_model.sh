#!/bin/sh
# The embedded model (assets/model) in a conversation, through `remora run --chat
# --transcript` continued across runs as the chat continues it: the second question
# of a conversation is answered right (turn 2 sees turn 1 with its reasoning), a
# conversation with thinking off answers directly on turns 1 and 2, and a greeting
# gets the short self-description instead of nonsense.
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=build/rel/remora
M=assets/model
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
ask() { # $1 = transcript ("" for none), $2 = prompt, then extra options; answer in $T/out
  tr=$1; p=$2; shift 2
  if [ -n "$tr" ]; then set -- "$@" --transcript "$tr"; fi
  $BIN run --model $M --chat --max-new 320 --prompt "$p" "$@" > "$T/out" 2> "$T/err" || { echo "FAIL run: $p"; cat "$T/err"; fail=1; }
}
expect() { # $1 = what, $2 = wanted answer
  if [ "$(cat "$T/out")" = "$2" ]; then echo "ok   $1"; else echo "FAIL $1: got '$(cat "$T/out")', want '$2'"; fail=1; fi
}

# thinking on: turn 1, then turn 2 with turn 1 (and its reasoning) in the history
ask "$T/c1.jsonl" 'What is 37*12?'; expect "turn 1 (think)" 444
ask "$T/c1.jsonl" 'What is 5+7?';   expect "turn 2 (think)" 12
[ "$(grep -c '"role"' "$T/c1.jsonl")" = 4 ] && grep -q '"reasoning_content"' "$T/c1.jsonl" \
  && echo "ok   transcript holds both turns with reasoning" || { echo "FAIL transcript"; cat "$T/c1.jsonl"; fail=1; }
grep -q '5+7' "$T/err" || { echo "FAIL no reasoning on turn 2"; fail=1; }

# thinking off: no reasoning, the answer directly, with its compact working for
# reverse and arithmetic (gen_data.py "no-think answers"), turn 1 and turn 2
ask "$T/c2.jsonl" 'Reverse the word "planet".' --no-think
expect "turn 1 (no think)" 'p l a n e t backwards is t e n a l p, so tenalp.'
ask "$T/c2.jsonl" 'What is 5+7?' --no-think
case $(cat "$T/out") in *". So 5+7=12.") echo "ok   turn 2 (no think): $(cat "$T/out")" ;;
  *) echo "FAIL turn 2 (no think): got '$(cat "$T/out")', want the working then 'So 5+7=12.'"; fail=1 ;; esac
ask "" 'What is 37*12?' --no-think
expect "37*12 (no think)" '7*2+0=14, 3*2+1=7: 37*2=74. 7*1+0=7, 3*1+0=3: 37*1=37, so 37*10=370. 4+0+0=4, 7+7+0=14, 0+3+1=4: 74+370=444. So 37*12=444.'
[ -s "$T/err" ] && grep -q 'from right to left' "$T/err" && { echo "FAIL reasoning with --no-think"; fail=1; }

# a greeting and an out-of-scope question: what the model is and what it can do
ask "" hello
grep -q "I am remora's small demonstration model" "$T/out" && grep -q "I can do arithmetic" "$T/out" \
  && echo "ok   hello: $(cut -c1-60 "$T/out")..." || { echo "FAIL hello: $(cat "$T/out")"; fail=1; }
ask "" 'What is the capital of France?'
grep -q "I am remora's small demonstration model" "$T/out" \
  && echo "ok   out of scope: $(cut -c1-60 "$T/out")..." || { echo "FAIL out of scope: $(cat "$T/out")"; fail=1; }
exit $fail
