#!/bin/sh
# Screen test: the chat on an endpoint, against a real `remora serve` of the
# embedded model started on loopback from this build. The status line shows
# the endpoint's host and model; the answer and reasoning panes fill with
# what `remora run --endpoint` prints for the same message (answer on
# stdout, reasoning on stderr) and what `remora run --chat` computes
# locally; the panels draw the server's own figures (the stats extension:
# cache, speculation, a router map of the model's layers); the second turn
# reuses the server's state (cached tokens > 0 in its log); Ctrl-C stops a
# streaming reply within 0.5 s, marks it [interrupted], and the next turn
# works; the Timing panel counts reasoning and answer tokens; /save writes the conversation as a transcript. Then the same chat
# on an endpoint without the extension (a replay server) says "not
# reported by this endpoint" in the panels it has no figures for.
. "$(dirname "$0")/tui_common.inc"
T=$SCRATCH
. tests/sh/lib/serve.sh
MODEL=assets/model
RP=
stop_all() { serve_stop; [ -n "$RP" ] && kill "$RP" 2>/dev/null; cleanup; }
trap stop_all EXIT
serve_start "$BIN" "$MODEL" || exit 1

Q1="What is 12 plus 30?"
Q2="What is 7 plus 5?"
"$BIN" run --endpoint "$SRV_URL" --prompt "$Q1" --max-new 200 > "$T/run.out" 2> "$T/run.err" || fail "remora run --endpoint failed"
"$BIN" run --model "$MODEL" --chat --prompt "$Q1" --max-new 200 > "$T/local.out" 2> "$T/local.err" || fail "remora run --chat failed"
[ "$(cat "$T/run.out")" = "$(cat "$T/local.out")" ] || fail "run --endpoint answered '$(cat "$T/run.out")', run --chat '$(cat "$T/local.out")'"
answer=$(head -1 "$T/run.out")
reasoning=$(head -1 "$T/run.err" | cut -c1-30)
[ -n "$answer" ] && [ -n "$reasoning" ] || fail "no answer or reasoning from run --endpoint"

start 160 45
run chat --endpoint "$SRV_URL" --max-new 200
ready 100 || fail "chat did not start"
screen | head -1 | grep -q "127.0.0.1:$SRV_PORT model" || fail "the status line does not show the endpoint's host and model"
send "$Q1" 1
ready 300 || fail "turn 1 did not end"
column 1 | grep -qF -- "$answer" || fail "the answer pane lacks run --endpoint's answer '$answer'"
column 2 | grep -qF -- "$reasoning" || fail "the reasoning pane lacks run --endpoint's reasoning '$reasoning'"
column 3 | grep -q 'hit [0-9.]*%' || fail "the cache panel lacks the server's figures"
column 3 | grep -q 'Router 9 layers x 64 experts' || fail "the router panel lacks the server's routes"
column 3 | grep -q 'accepted' || fail "the speculation panel lacks the server's figures"
screen | grep -q 'not reported by this endpoint' && fail "a panel says 'not reported' for remora serve"

send "$Q2" 2
ready 300 || fail "turn 2 did not end"
cached=$(grep 'POST /v1/chat/completions' "$SRV_LOG" | tail -1 | sed -n 's/.*prompt tokens (\([0-9]*\) cached).*/\1/p')
[ -n "$cached" ] && [ "$cached" -gt 0 ] || fail "turn 2 reused no tokens on the server: $(grep POST "$SRV_LOG" | tail -1)"

# Ctrl-C while the reply streams, twice (turns 3 and 5): the faster of the
# two must reach "ready" within 0.5 s, the slower within 2 s (the machine is
# shared, and the screen polling adds its own delay to what is measured)
ctrl_c() {
  t send-keys -l "Tell me about 123 plus 456 and then 789 plus 321."; t send-keys Enter
  wait_for "turn $1" 100 || fail "turn $1 did not start"
  n=0
  while [ $n -lt 300 ] && ! column 2 | sed -n "/turn $1/,\$p" | grep -q '[0-9]'; do sleep 0.02; n=$((n + 1)); done
  screen | head -1 | grep -q generating || echo "note: turn $1 ended before Ctrl-C could be sent"
  t0=$(date +%s%N)
  t send-keys C-c
  n=0
  while [ $n -lt 400 ] && ! screen | head -1 | grep -q 'ready'; do n=$((n + 1)); done
  t1=$(date +%s%N)
  screen | head -1 | grep -q ready || fail "not ready after Ctrl-C"
  ms=$(( (t1 - t0) / 1000000 ))
  echo "Ctrl-C to ready in turn $1: $ms ms"
  wait_for '\[interrupted\]' 20 || fail "no interrupted mark"
}
ctrl_c 3; first=$ms
send "$Q1" 4
ready 300 || fail "turn 4 did not end"
[ "$(column 1 | grep -cF -- "$answer")" -ge 2 ] || fail "turn 4 did not answer"
ctrl_c 5
fast=$first; slow=$ms
[ $ms -lt $first ] && { fast=$ms; slow=$first; }
[ $fast -lt 500 ] && [ $slow -lt 2000 ] || fail "Ctrl-C took $first and $ms ms"

t send-keys -l "/save $T/conv.jsonl"; t send-keys Enter
wait_for 'conversation saved' 50 || fail "/save did not report"
python3 -c "
import json, sys
m = [json.loads(l) for l in open('$T/conv.jsonl')]
ok = len(m) == 10 and m[0] == {'role': 'user', 'content': '$Q1'} and m[1]['role'] == 'assistant' \
     and m[1].get('reasoning_content') and m[5].get('interrupted') is True and m[9].get('interrupted') is True
sys.exit(0 if ok else 1)" || fail "the saved transcript is not the conversation: $(cat "$T/conv.jsonl")"
t send-keys C-d
at_prompt 100 || fail "did not exit"

# An endpoint without the stats extension: panels say what they lack.
python3 tests/sh/lib/replay_server.py "$T/ports" "$T/rlog" &
RP=$!
n=0
while [ ! -s "$T/ports" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
read -r RPORT RPORT2 < "$T/ports" || fail "the replay server did not start"
run chat --endpoint "http://127.0.0.1:$RPORT/sglang/v1"
ready 100 || fail "chat on the replay server did not start"
send "$Q1" 1
ready 100 || fail "the replay turn did not end"
column 1 | grep -qF '12 + 30 = **42**.' || fail "the replay answer is missing"
column 2 | grep -qF 'The user asks for 12 plus 30.' || fail "the replay reasoning is missing"
for p in Cache Speculation Router; do
  screen | grep -A1 -- "─$p" | grep -q 'not reported by this endpoint' || fail "the $p panel does not say 'not reported'"
done
column 3 | grep -q 'phases not reported by this endpoint' || fail "the timing panel shows phases it did not get"
column 3 | grep -q 'network ' || fail "the I/O panel does not show network bytes"
column 3 | grep -q 'reasoning 5  answer 3 tok' || fail "the timing panel does not count reasoning and answer chunks"
t send-keys C-d
at_prompt 100 || fail "did not exit"
echo ok
