#!/bin/sh
# endpoint_replay.sh — `remora run --endpoint` against a replay server
# (tests/sh/lib/replay_server.py) that sends vLLM's and SGLang's exact
# chunk sequences for a reasoning model, on loopback: both reasoning field
# names and the null fields give the same answer on stdout and reasoning on
# stderr; SGLang's base64 routed experts are read with a known model's shape
# or said in a note; think markers inside plain content (<think>, K3's) are split out;
# a whole JSON reply is read too; an error in mid-stream, a 400 and a 429
# (with Retry-After) are said and exit 1; a stalled stream is given up
# after --endpoint-timeout; a refused connection, a DNS failure, a TLS
# failure and a self-signed certificate are said (no request goes to a
# server whose certificate fails); Ctrl-C ends a stream within 0.5 s with 130; a redirect
# to another host (127.0.0.2) gets no key while the endpoint's own host gets
# it, and the key is never printed nor saved; the request carries the history (reasoning as
# reasoning_content and reasoning), stream_options.include_usage and the
# sampling options; bad option combinations exit 2, an answer that cannot
# be written to stdout exits 1. Every wait is bounded.
cd "$(dirname "$0")/../.." || exit 2
BIN=${REMORA_BIN:-build/rel/remora}
[ -x "$BIN" ] || { echo "missing $BIN (run make)"; exit 1; }
T=$(mktemp -d) || exit 1
SP=
cleanup() { [ -n "$SP" ] && kill "$SP" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

# a self-signed certificate for the replay server's TLS port
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$T/key.pem" -out "$T/cert.pem" 2> "$T/openssl.err" || { cat "$T/openssl.err"; exit 1; }
python3 tests/sh/lib/replay_server.py "$T/ports" "$T/log" "$T/cert.pem" "$T/key.pem" &
SP=$!
i=0
while [ ! -s "$T/ports" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
read -r PORT PORT2 PORT3 < "$T/ports" || { echo "the replay server did not start"; exit 1; }
U=http://127.0.0.1:$PORT
REASONING='The user asks for 12 plus 30. Add the units: 2 + 0 = 2; tens: 1 + 3 = 4.'
ANSWER='12 + 30 = **42**.'

# ep SCENARIO [OPTIONS...]: remora run on it; $T/out, $T/err, $rc
ep() {
  s=$1; shift
  timeout 20 "$BIN" run --endpoint "$U/$s/v1" --prompt "What is 12 plus 30?" "$@" > "$T/out" 2> "$T/err"
  rc=$?
}
out_is() { [ "$(cat "$T/out")" = "$1" ]; }
err_has() { grep -qF -- "$1" "$T/err"; }
# last_body EXPR: EXPR (Python, on the last POST's JSON body as b) is true
last_body() {
  python3 - "$T/log" "$1" <<'PY'
import json, sys
posts = [json.loads(l) for l in open(sys.argv[1]) if '"POST"' in l]
b = posts[-1]['body']
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

for s in vllm sglang whole; do
  ep $s
  check "$s: the answer on stdout" out_is "$ANSWER"
  check "$s: the reasoning on stderr" err_has "$REASONING"
  check "$s: exit 0" [ $rc -eq 0 ]
done
ep vllm
check "vllm: usage read (ctx 31, 16 cached)" err_has "ctx 31, 16 reused"
check "vllm: the summary says what the endpoint reported, no zeros for the rest" \
  sh -c "grep -q '8 chunks of text .* kB received' '$T/err' && ! grep -q 'drafted\|MB read' '$T/err'"
check "the request: stream, include_usage, the model, the message" \
  last_body "b['stream'] is True and b['stream_options'] == {'include_usage': True} and b['model'] == 'moonshotai/Kimi-K3' and b['messages'] == [{'role': 'user', 'content': 'What is 12 plus 30?'}] and 'remora' not in b"

for url in "$U" "$U/" "$U/vllm/v1/chat/completions" "$U/vllm/v1/"; do
  timeout 20 "$BIN" run --endpoint "$url" --prompt hi > "$T/out" 2> "$T/err"
  check "the URL $url: read as the API's base" out_is "$ANSWER"
done

# SGLang's base64 routed experts: read when the length and the token count
# name one known model (the router then draws them: tui_endpoint.sh); any
# other form is a note on a turn that still works, never a failure
for s in b64-kl b64-k3; do
  ep $s
  check "$s: decoded, the answer, no note, exit 0" sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$T/out')\" = '$ANSWER' ] && ! grep -q 'note:' '$T/err'"
done
for c in "b64-ambiguous|13392 values fit more than one known model's layers x experts per token (Kimi K3 93 x 16, Kimi-Linear-48B-A3B 27 x 8)" \
         "b64-noshape|1000 values fit no known model's" \
         "b64-truncated|not base64 (57597 characters, not a multiple of 4)" \
         "b64-badchar|: not base64" \
         "b64-odd|10 bytes, not a whole number of int32 values" \
         "b64-range|expert id 300 at layer 26 is not one of Kimi-Linear-48B-A3B's 256 experts"; do
  s=${c%%|*}; want=${c#*|}
  ep $s
  check "$s: a note ('$want'), the answer, exit 0" sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$T/out')\" = '$ANSWER' ] && grep -qF \"remora run: note: the server's routed experts (base64) are not shown: \" '$T/err' && grep -qF -- \"$want\" '$T/err'"
done
# a model id that names Kimi K3 takes K3's shape: Kimi-Linear's routes do not fit it
timeout 20 "$BIN" run --endpoint "$U/sglang/v1" --prompt "@b64-kl" > "$T/out" 2> "$T/err"
rc=$?
check "b64 with the model id Kimi-K3: K3's shape, Kimi-Linear's routes refused" \
  sh -c "[ $rc -eq 0 ] && grep -qF \"10800 values are not whole tokens of Kimi K3's 93 layers x 16 experts\" '$T/err'"

ep markers
check "think markers in content: the answer" out_is "The answer is 42."
check "think markers in content: the reasoning" err_has "Let me add: 42."
check "think markers never shown" sh -c "! grep -q 'think>' '$T/out' '$T/err'"
ep markers-k3
check "K3's markers in content: the answer" out_is "It is 42."
check "K3's markers in content: the reasoning" err_has "Twelve plus thirty."
check "K3's markers never shown" sh -c "! grep -qF '<|' '$T/out' '$T/err'"

ep error-mid
check "an error in mid-stream: said, exit 1" sh -c "[ $rc -eq 1 ] && grep -q 'error in mid-reply: CUDA out of memory while decoding' '$T/err'"
check "an error in mid-stream: the text so far kept" out_is "The answer"
ep busy
check "429: said with its Retry-After" sh -c "[ $rc -eq 1 ] && grep -q 'is busy (HTTP 429): Too many requests.*retry after 7 s' '$T/err'"
ep badjson
check "400: the server's message" sh -c "[ $rc -eq 1 ] && grep -q 'HTTP 400: messages\[1\].content: field required' '$T/err'"

t0=$(date +%s%N)
ep stall --endpoint-timeout 1
t1=$(date +%s%N)
check "a stall: given up after --endpoint-timeout 1 (in $(( (t1 - t0) / 1000000 )) ms)" \
  sh -c "[ $rc -eq 1 ] && grep -q 'no data from 127.0.0.1:$PORT for 1 s' '$T/err' && [ $(( (t1 - t0) / 1000000 )) -lt 4000 ]"

closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
timeout 20 "$BIN" run --endpoint "http://127.0.0.1:$closed/v1" --prompt hi > "$T/out" 2> "$T/err"; rc=$?
check "connection refused: said, exit 1" sh -c "[ $rc -eq 1 ] && grep -q 'cannot connect to 127.0.0.1:$closed' '$T/err'"
# a DNS failure, in a network namespace of its own (nothing leaves the machine)
if unshare -rn true 2>/dev/null; then
  timeout 20 unshare -rn "$BIN" run --endpoint "http://remora-test.invalid:9/v1" --endpoint-timeout 3 --prompt hi \
    > "$T/out" 2> "$T/err"; rc=$?
  check "DNS failure: said, exit 1" sh -c "[ $rc -eq 1 ] && grep -q 'cannot resolve the host name remora-test.invalid (DNS)' '$T/err'"
else
  echo "skip DNS failure: unshare -rn is not allowed here"
fi
timeout 20 "$BIN" run --endpoint "https://127.0.0.1:$PORT/vllm/v1" --prompt hi > "$T/out" 2> "$T/err"; rc=$?
check "TLS failure: said, exit 1" sh -c "[ $rc -eq 1 ] && grep -q 'TLS with 127.0.0.1:$PORT failed' '$T/err'"
: > "$T/log"
REMORA_TEST_KEY=sekrit-key-123 timeout 20 "$BIN" run --endpoint "https://127.0.0.1:$PORT3/vllm/v1" \
  --api-key-env REMORA_TEST_KEY --prompt hi > "$T/out" 2> "$T/err"; rc=$?
check "a self-signed certificate: refused, said, exit 1" \
  sh -c "[ $rc -eq 1 ] && grep -q 'TLS with 127.0.0.1:$PORT3 failed.*certificate' '$T/err'"
check "a self-signed certificate: no request reached the server (nor the key)" sh -c "[ ! -s '$T/log' ]"

# Ctrl-C: SIGINT ends the stream within 0.5 s, what came is kept, exit 130
# (--foreground: a timeout of its own process group would pass the signal
# on twice, to the child and to the group, and a second SIGINT ends remora
# run at once, as a second Ctrl-C should)
timeout --foreground 20 "$BIN" run --endpoint "$U/slow/v1" --prompt hi > "$T/out" 2> "$T/err" &
RP=$!
i=0
while ! grep -q 'Counting: 1 2' "$T/out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
t0=$(date +%s%N)
kill -INT $RP
while kill -0 $RP 2>/dev/null && [ $i -lt 400 ]; do sleep 0.01; i=$((i + 1)); done
t1=$(date +%s%N)
wait $RP; rc=$?
ms=$(( (t1 - t0) / 1000000 ))
check "Ctrl-C: exit 130 within 0.5 s ($ms ms), the text kept" \
  sh -c "[ $rc -eq 130 ] && [ $ms -lt 500 ] && grep -q 'Counting: 1 2' '$T/out' && grep -q '(stopped)' '$T/err'"

# the key: sent to the endpoint's host, not to the host a redirect names
: > "$T/log"
REMORA_TEST_KEY=sekrit-key-123 ep redirect --api-key-env REMORA_TEST_KEY --transcript "$T/tr.jsonl"
check "redirect: followed, the answer" out_is "$ANSWER"
check "redirect: the key went to the endpoint's host" python3 -c "
import json, sys
log = [json.loads(l) for l in open('$T/log')]
main = [e for e in log if e['server'] == 'main']
other = [e for e in log if e['server'] == 'other']
sys.exit(0 if main and all(e['auth'] == 'Bearer sekrit-key-123' for e in main) and other else 1)"
check "redirect: no key for the other host" python3 -c "
import json, sys
log = [json.loads(l) for l in open('$T/log')]
sys.exit(0 if all(e['auth'] is None for e in log if e['server'] == 'other') else 1)"
check "the key is never printed nor saved" sh -c "! grep -rq sekrit-key '$T/out' '$T/err' '$T/tr.jsonl'"
REMORA_TEST_KEY=sekrit-key-123 timeout 20 "$BIN" run --endpoint "http://localhost.example:$PORT/v1" \
  --api-key-env REMORA_TEST_KEY --prompt hi > "$T/out" 2> "$T/err"; rc=$?
check "a key over plain HTTP to a non-loopback host: refused, exit 2" \
  sh -c "[ $rc -eq 2 ] && grep -q 'sent only over HTTPS' '$T/err' && ! grep -q sekrit '$T/err'"

# the history: prior reasoning as reasoning_content and as reasoning; options passed through
ep vllm --transcript "$T/tr.jsonl" --max-new 7 --temperature 0.5 --top-p 0.9 --seed 3 --thinking-effort high
check "turn 2: the history with its reasoning both ways" last_body \
  "len(b['messages']) == 3 and b['messages'][1] == {'role': 'assistant', 'content': '$ANSWER', 'reasoning_content': '$REASONING', 'reasoning': '$REASONING'} and b['messages'][2]['role'] == 'user'"
check "options: max_tokens, temperature, top_p, seed, reasoning_effort" last_body \
  "b['max_tokens'] == 7 and abs(b['temperature'] - 0.5) < 1e-6 and abs(b['top_p'] - 0.9) < 1e-6 and b['seed'] == 3 and b['reasoning_effort'] == 'high' and 'chat_template_kwargs' not in b"
check "the transcript: the engine's format, with reasoning_content" python3 -c "
import json, sys
m = [json.loads(l) for l in open('$T/tr.jsonl')]
sys.exit(0 if len(m) == 4 and m[-1]['role'] == 'assistant' and m[-1]['reasoning_content'] == '$REASONING' else 1)"
ep vllm --no-think --system 'Be brief.'
check "--no-think: chat_template_kwargs.thinking false; --system first" last_body \
  "b['chat_template_kwargs'] == {'thinking': False} and b['messages'][0] == {'role': 'system', 'content': 'Be brief.'}"

# option rules
timeout 20 "$BIN" run --endpoint "$U/vllm/v1" --ram 2 --prompt hi > /dev/null 2> "$T/err"; rc=$?
check "--endpoint with --ram: exit 2" sh -c "[ $rc -eq 2 ] && grep -q -- '--ram is for a local model' '$T/err'"
timeout 20 "$BIN" run --endpoint "$U/vllm/v1" --max-ctx 100 --prompt hi > /dev/null 2> "$T/err"; rc=$?
check "--endpoint with --max-ctx: exit 2" sh -c "[ $rc -eq 2 ] && grep -q -- '--max-ctx is for a local model' '$T/err'"
timeout 20 "$BIN" run --endpoint "$U/vllm/v1" --prompt hi > /dev/full 2> "$T/err"; rc=$?
check "stdout that cannot be written: said, exit 1" \
  sh -c "[ $rc -eq 1 ] && grep -q 'cannot write the answer to standard output' '$T/err'"
timeout 20 "$BIN" run --endpoint "$U/vllm/v1" --api-key-env REMORA_UNSET_VAR_X --prompt hi > /dev/null 2> "$T/err"; rc=$?
check "--api-key-env of an unset variable: exit 2" sh -c "[ $rc -eq 2 ] && grep -q 'REMORA_UNSET_VAR_X: the environment variable is not set' '$T/err'"
timeout 20 "$BIN" run --model assets/model --endpoint-model x --prompt hi > /dev/null 2> "$T/err"; rc=$?
check "--endpoint-model without --endpoint: exit 2" [ $rc -eq 2 ]
timeout 20 "$BIN" run --endpoint "$U/vllm/v1" --endpoint-model nope --prompt hi > /dev/null 2> "$T/err"; rc=$?
check "a model the server does not list: said" sh -c "[ $rc -eq 1 ] && grep -q \"does not list the model 'nope'\" '$T/err'"
timeout 20 "$BIN" run --endpoint "ftp://127.0.0.1/v1" --prompt hi > /dev/null 2> "$T/err"; rc=$?
check "not an http URL: exit 2" [ $rc -eq 2 ]
exit $fail
