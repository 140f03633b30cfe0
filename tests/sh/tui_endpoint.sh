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
# works; /save writes the conversation as a transcript. Then the same chat
# on an endpoint without the extension (a replay server, with an API key):
# the panels it has no figures for say "not reported by this endpoint",
# the Timing panel counts reasoning and answer tokens, the I/O panel shows
# network bytes; a 429, an error in mid-stream and a stall are notes and
# the chat goes on; routed experts draw the router panel (nested arrays,
# SGLang's base64 with Kimi K3's shape; base64 that fits not is a note); /think off,
# /save, /clear and /load reach the server; the key goes with every
# request and appears nowhere else.
. "$(dirname "$0")/tui_common.inc"
T=$SCRATCH
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
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
screen | head -1 | grep -q "127.0.0.1:$SRV_PORT remora-k3-demo" || fail "the status line does not show the endpoint's host and model"
send "$Q1" 1
ready 300 || fail "turn 1 did not end"
column 1 | grep -qF -- "$answer" || fail "the answer pane lacks run --endpoint's answer '$answer'"
column 2 | grep -qF -- "$reasoning" || fail "the reasoning pane lacks run --endpoint's reasoning '$reasoning'"
column 3 | grep -q 'hit [0-9.]*%' || fail "the cache panel lacks the server's figures"
column 3 | grep -q 'Router layers 1-9 x 64 experts' || fail "the router panel lacks the server's routes, numbered as a local chat numbers them (1-9)"
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
  # the reply streams: reasoning text below the turn's header
  while [ $n -lt 300 ] && ! column 2 | sed -n "/turn $1/,\$p" | sed 1d | grep -q '[[:alnum:]]'; do
    sleep 0.02; n=$((n + 1))
  done
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

# An endpoint without the stats extension (a replay server, with a key):
# panels say what they lack; a 429, an error in mid-stream and a stall are
# notes in the chat, which goes on; routed experts draw the router panel;
# /think off asks for no thinking; /save, /clear and /load give the
# conversation back to the server; the key goes to the server and nowhere
# else (screen, chat.log, history, the saved conversation).
python3 tests/sh/lib/replay_server.py "$T/ports" "$T/rlog" &
RP=$!
n=0
while [ ! -s "$T/ports" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
read -r RPORT RPORT2 < "$T/ports" || fail "the replay server did not start"
KEY=sekrit-tui-key-789
printf '%s' "$KEY" > "$T/key"
screens=$T/screens
seen() { screen >> "$screens"; }
# the answer pane's text as one line (notes wrap)
flat() { column 1 | sed 's/ *$//' | tr '\n' ' ' | tr -s ' '; }
t send-keys -l "export REMORA_TEST_KEY=\$(cat $T/key)"; t send-keys Enter
run chat --endpoint "http://127.0.0.1:$RPORT/sglang/v1" --api-key-env REMORA_TEST_KEY --endpoint-timeout 1
ready 100 || fail "chat on the replay server did not start"
send "$Q1" 1
ready 100 || fail "the replay turn did not end"
seen
column 1 | grep -qF '12 + 30 = **42**.' || fail "the replay answer is missing"
column 2 | grep -qF 'The user asks for 12 plus 30.' || fail "the replay reasoning is missing"
for p in Cache Speculation Router; do
  screen | grep -A1 -- "─$p" | grep -q 'not reported by this endpoint' || fail "the $p panel does not say 'not reported'"
done
column 3 | grep -q 'phases not reported by this endpoint' || fail "the timing panel shows phases it did not get"
column 3 | grep -qE " [1-9][0-9.]* [kMG]?B/tok" && column 3 | grep -qE "network [1-9][0-9.]* [kMG]?B/s" || fail "the I/O panel does not show network bytes"
column 3 | grep -q 'reasoning 5  answer 3 tok' || fail "the timing panel does not count reasoning and answer chunks"

send "@busy" 2
ready 100 || fail "the 429 turn did not end"
seen
flat | grep -q 'is busy (HTTP 429): Too many requests.* retry after 7 s' || fail "the 429 is not said with its Retry-After"
send "@error-mid" 3
ready 100 || fail "the error turn did not end"
seen
flat | grep -q 'error in mid-reply: CUDA out of memory while decoding' || fail "the mid-stream error is not said"
send "@stall" 4
ready 100 || fail "the stalled turn did not end"
seen
flat | grep -q "no data from 127.0.0.1:$RPORT for 1 s" || fail "the stall is not said"
send "@routes" 5
ready 100 || fail "the routes turn did not end"
seen
[ "$(column 1 | grep -cF '12 + 30 = **42**.')" -ge 2 ] || fail "the chat did not go on after the errors"
column 3 | grep -q 'Router layers 0-3 x 16 experts' || fail "the router panel does not draw the endpoint's routed experts"
# SGLang's base64 routed experts, read with Kimi K3's shape (the model id
# names it): its 92 MoE layers of 896 experts; Kimi-Linear's do not fit K3's
# shape: a note says so, once, and the turn works
send "@b64-k3" 6
ready 100 || fail "the base64 routes turn did not end"
column 3 | grep -q 'Router layers 0-91 x 896' || fail "the router panel does not draw SGLang's base64 routed experts"
send "@b64-kl" 7
ready 100 || fail "the undecodable base64 routes turn did not end"
seen
flat | grep -q "routed experts (base64) are not shown: 10800 values are not whole tokens of Kimi K3's 93 layers x 16 experts" ||
  fail "the undecodable base64 routes are not said"
t send-keys -l "/think off"; t send-keys Enter
send "$Q2" 8
ready 100 || fail "the /think off turn did not end"
python3 - "$T/rlog" <<'PY' || fail "/think off did not send chat_template_kwargs.thinking false"
import json, sys
b = [json.loads(l) for l in open(sys.argv[1]) if '"POST"' in l][-1]['body']
sys.exit(0 if b.get('chat_template_kwargs') == {'thinking': False} else 1)
PY

t send-keys -l "/save $T/rconv.jsonl"; t send-keys Enter
wait_for 'conversation saved' 50 || fail "/save of the remote conversation did not report"
t send-keys -l "/clear"; t send-keys Enter
wait_for 'conversation cleared' 50 || fail "/clear did not report"
t send-keys -l "/load $T/rconv.jsonl"; t send-keys Enter
wait_for 'conversation loaded: [0-9]+ turns' 50 || fail "/load of the remote conversation did not report"
seen
loaded=$(screen | sed -n 's/.*conversation loaded: \([0-9]*\) turns.*/\1/p' | tail -1)
send "$Q1" $((loaded + 1))
ready 100 || fail "the turn after /load did not end"
seen
python3 - "$T/rlog" "$Q1" "$Q2" <<'PY' || fail "the turn after /load did not send the loaded conversation"
import json, sys
b = [json.loads(l) for l in open(sys.argv[1]) if '"POST"' in l][-1]['body']
users = [m['content'] for m in b['messages'] if m['role'] == 'user']
sys.exit(0 if users[0] == sys.argv[2] and sys.argv[3] in users and users[-1] == sys.argv[2] and len(users) >= 4 else 1)
PY
# the remote conversation is autosaved as a local one is: Ctrl-D quits at
# once and says where, and the session file holds the turns
t send-keys C-d
at_prompt 100 || fail "did not exit"
screen | grep -q "remora chat: the conversation is saved in $XDG_STATE_HOME/remora/sessions/" ||
  fail "the quit did not say where the remote conversation is"
grep -lqF -- "$Q1" "$XDG_STATE_HOME"/remora/sessions/*.jsonl 2>/dev/null || fail "the remote conversation was not autosaved"
seen
python3 - "$T/rlog" "$KEY" <<'PY' || fail "the key did not go with every request to the replay server"
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if log and all(e['auth'] == 'Bearer ' + sys.argv[2] for e in log) else 1)
PY
for f in "$screens" "$T/rconv.jsonl" "$XDG_STATE_HOME"; do
  ! grep -rqF -- "$KEY" "$f" || fail "the key is in $f"
done
[ -f "$XDG_STATE_HOME/remora/history" ] || fail "no input history was written (the key check would be empty)"
echo ok
