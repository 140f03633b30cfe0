#!/bin/sh
# run_prefill.sh — `remora run` on a long prompt (the embedded model, a
# ~20 KB paste): Ctrl-C (SIGINT) one second in, while the prompt is still
# being processed, ends the run with exit 130 within a second; the progress
# line (tokens, rate, ETA) appears on a terminal (a pty from script(1)) and
# not when stderr is a file; and the trace has one "pass" line per complete
# layer-major pass, with --prefill-chunk setting the pass size.
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=build/rel/remora
M=assets/model
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
export REMORA_PREFIX_CACHE_GB=0     # every run computes its prompt
fail=0
bad() { echo "FAIL: $*"; fail=1; }
python3 - > "$T/long.txt" <<'PY'
import random
random.seed(3)
words = "apple river stone cloud seven garden number letter window bright quiet".split()
print(" ".join(random.choice(words) for _ in range(3600)))
PY

# SIGINT during the prompt
$BIN run --model $M --prompt - --max-new 4 < "$T/long.txt" > "$T/out" 2> "$T/err" &
pid=$!
sleep 1
kill -0 $pid 2>/dev/null || bad "the run ended before the signal (the prompt was too short to test)"
t0=$(date +%s.%N)
kill -INT $pid
wait $pid; rc=$?
t1=$(date +%s.%N)
took=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
[ $rc = 130 ] || { bad "exit $rc after SIGINT in the prompt, want 130"; tail -3 "$T/err"; }
python3 -c "import sys; sys.exit(0 if $took < 1.0 else 1)" && echo "ok   SIGINT in the prompt: exit 130 after ${took} s" ||
  bad "SIGINT in the prompt took ${took} s to end the run"

# the progress line: on a terminal, not on a file
printf 'What is 37*12? %s' "$(head -c 4000 "$T/long.txt")" > "$T/mid.txt"
script -qec "$BIN run --model $M --prompt - --max-new 2 --prefill-chunk 64 < $T/mid.txt > /dev/null" /dev/null > "$T/tty" 2>&1
grep -q 'remora run: prompt \[' "$T/tty" && grep -q 'of the work' "$T/tty" && grep -q 'ETA' "$T/tty" &&
  echo "ok   progress line on a terminal" || { bad "no progress line on a terminal"; head -c 600 "$T/tty"; }
$BIN run --model $M --prompt - --max-new 2 --prefill-chunk 64 --trace "$T/tr" < "$T/mid.txt" > /dev/null 2> "$T/err2" ||
  bad "the run with --prefill-chunk 64 failed"
grep -q 'remora run: prompt' "$T/err2" && bad "a progress line went to a file" || echo "ok   no progress line on a file"
# passes of 64 tokens: ceil(tokens / 64) "pass" lines before the prompt's line
python3 - "$T/tr" <<'PY' || fail=1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
passes = [r for r in rows if r.get("kind") == "pass"]
prompt = [r for r in rows if r.get("kind") == "prompt"][0]
n = prompt["prompt"]["prefilled"]
want = -(-n // 64)
ok = len(passes) == want and passes[-1]["fed"] == n and all(p["bytes_experts"] >= 0 and p["seconds"] > 0 for p in passes)
print(("ok  " if ok else "FAIL") + f" {len(passes)} pass lines for {n} prompt tokens in passes of <= 64 (want {want})")
sys.exit(0 if ok else 1)
PY
[ $fail = 0 ] && echo "ok run_prefill"
exit $fail
