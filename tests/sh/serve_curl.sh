#!/bin/sh
# `remora serve` on loopback, driven with curl. On both fixture models and
# the embedded model, greedy replies (whole and streamed) equal `remora run
# --chat` on the same messages: the same tokens (the stats extension's ids
# against run's trace), the reasoning and the answer split the same way;
# usage counts the prompt (against `remora tokenize --chat`), the reply and
# its reasoning; a second turn that resends the history equals run's
# second turn and reports the reused tokens as cached. Raw completions
# from text and from ids; stop strings; the extension only when asked for;
# the models and health endpoints; 503 while the model loads, and exit 2
# when it cannot be opened.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d); trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
fail=0

P1="What is 12+7?"
P2="And 3+4?"
user1=$(printf '{"role":"user","content":"%s"}' "$P1")

for m in "$FX/k3-tiny" "$FX/kl-tiny" assets/model; do
  serve_start "$BIN" "$m" || { fail=1; continue; }
  # the name the server gives the model (the embedded one is remora-k3-demo)
  name=$(curl -s "$SRV_URL/models" | python3 -c "import json,sys; print(json.load(sys.stdin)['data'][0]['id'])")
  run_ref "$m" "$P1" 24 "$T/conv.jsonl.$name" || { fail=1; serve_stop; continue; }
  cp "$T/ref.json" "$T/ref1.json"
  printf '{"messages":[%s]}' "$user1" | "$BIN" tokenize --tokenizer "$m" --chat > "$T/tok1.json"

  # the whole reply
  post /chat/completions "{\"model\":\"$name\",\"messages\":[$user1],\"max_tokens\":24,\"temperature\":0}" > "$T/r.json"
  expect "$name: whole reply equals remora run --chat" \
    "L('r')['choices'][0]['message']['content'] == L('ref1')['content'] and
     L('r')['choices'][0]['message'].get('reasoning_content', '') == L('ref1')['reasoning'] and
     L('r')['object'] == 'chat.completion' and L('r')['model'] == '$name'"
  # completion tokens count the one that ended the message, which has no
  # record of its own after a plain step (it is never fed)
  expect "$name: usage of the whole reply" \
    "L('r')['usage']['prompt_tokens'] == len(L('tok1')) and
     L('r')['usage']['completion_tokens'] - len(L('ref1')['ids']) in (0, 1) and
     L('r')['usage']['total_tokens'] == len(L('tok1')) + L('r')['usage']['completion_tokens'] and
     L('r')['usage']['prompt_tokens_details']['cached_tokens'] == 0 and
     L('r')['choices'][0]['finish_reason'] ==
       ('stop' if L('r')['usage']['completion_tokens'] > len(L('ref1')['ids']) or len(L('ref1')['ids']) < 24 else 'length')"

  # the same streamed, with the stats extension and the usage chunk
  curl -sN --max-time 120 "$SRV_URL/chat/completions" -d "{\"messages\":[$user1],\"max_tokens\":24,\"stream\":true,
    \"stream_options\":{\"include_usage\":true},\"remora\":{\"stats\":true}}" > "$T/stream.txt"
  sse "$T/stream.txt" > "$T/s.json"
  expect "$name: streamed reply equals remora run --chat token for token" \
    "L('s')['ids'] == L('ref1')['ids'] and L('s')['content'] == L('ref1')['content'] and
     L('s')['reasoning'] == L('ref1')['reasoning'] and L('s')['done'] and not L('s')['bad'] and
     L('s')['finish'] == L('r')['choices'][0]['finish_reason']"
  expect "$name: the stream's usage, records and reasoning tokens" \
    "L('s')['usage']['prompt_tokens'] == len(L('tok1')) and L('s')['kinds'].get('prompt') == 1 and
     [x['token_index'] for x in L('s')['records'] if x['kind'] == 'token'] == list(range(len(L('ref1')['ids']))) and
     L('s')['usage']['completion_tokens_details']['reasoning_tokens'] ==
       (L('s')['first_answer'] if L('s')['first_answer'] is not None else
        (L('s')['last_reasoning'] + 1 if L('s')['last_reasoning'] is not None else 0)) and
     L('s')['usage'] == dict(L('r')['usage'])"

  # turn 2 resends the history: run's second turn, with the first turn reused
  run_ref "$m" "$P2" 24 "$T/conv.jsonl.$name" || fail=1
  python3 - "$T/ref1.json" "$P1" "$P2" > "$T/turn2.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
msgs = [{'role': 'user', 'content': sys.argv[2]},
        {'role': 'assistant', 'content': a['content'], 'reasoning_content': a['reasoning']},
        {'role': 'user', 'content': sys.argv[3]}]
print(json.dumps({'messages': msgs, 'max_tokens': 24, 'stream': True, 'stream_options': {'include_usage': True},
                  'remora': {'stats': True}}))
PY
  curl -sN --max-time 120 "$SRV_URL/chat/completions" --data-binary @"$T/turn2.json" > "$T/stream2.txt"
  sse "$T/stream2.txt" > "$T/s2.json"
  expect "$name: second turn equals remora run's second turn" \
    "L('s2')['ids'] == L('ref')['ids'] and L('s2')['content'] == L('ref')['content'] and
     L('s2')['reasoning'] == L('ref')['reasoning']"
  cached=$(js "j['usage']['prompt_tokens_details']['cached_tokens']" < "$T/s2.json")
  echo "     $name: turn 2 reused $cached of $(js "j['usage']['prompt_tokens']" < "$T/s2.json") prompt tokens"
  if [ "$name" = model ]; then
    # the embedded model writes text that tokenises back as it was
    # generated, so the whole first turn is reused
    expect "$name: second turn's cached tokens cover the first turn" \
      "L('s2')['usage']['prompt_tokens_details']['cached_tokens'] >= L('s')['usage']['total_tokens'] - 1"
  fi

  # without the extension, no chunk carries it
  curl -sN --max-time 120 "$SRV_URL/chat/completions" -d "{\"messages\":[$user1],\"max_tokens\":4,\"stream\":true}" \
    > "$T/plain.txt"
  grep -q '"remora"' "$T/plain.txt" && { echo "FAIL $name: the stats extension without asking"; fail=1; }
  serve_stop
done

# ---- raw completions: text, ids, reuse of an extended prompt, stop strings
m=$FX/k3-tiny
serve_start "$BIN" "$m" || exit 1
text="The quick brown fox"
"$BIN" run --model "$m" --prompt "$text" --max-new 16 --trace "$T/raw.trace" > "$T/raw.out" 2>/dev/null
python3 -c "
import json
ids = [r['id'] for r in map(json.loads, open('$T/raw.trace')) if r.get('kind') == 'token']
print(json.dumps({'ids': ids, 'text': open('$T/raw.out', encoding='utf-8').read()[:-1]}))" > "$T/rawref.json"
echo "[\"$text\"]" | "$BIN" tokenize --tokenizer "$m" | js 'json.dumps(j[0])' > "$T/pids.json"
post /completions "{\"prompt\":\"$text\",\"max_tokens\":16}" > "$T/c1.json"
expect "completion of text equals remora run" \
  "L('c1')['choices'][0]['text'] == L('rawref')['text'] and L('c1')['object'] == 'text_completion' and
   L('c1')['usage']['completion_tokens'] - len(L('rawref')['ids']) in (0, 1) and
   L('c1')['usage']['prompt_tokens'] == len(L('pids'))"
curl -sN --max-time 60 "$SRV_URL/completions" -d "{\"prompt\":$(cat "$T/pids.json"),\"max_tokens\":16,\"stream\":true,
  \"remora\":{\"stats\":true}}" > "$T/c2.txt"
sse "$T/c2.txt" > "$T/c2.json"
expect "completion of the same ids, streamed, gives the same tokens" \
  "L('c2')['ids'] == L('rawref')['ids'] and L('c2')['text'] == L('rawref')['text'] and L('c2')['done']"
# the prompt and its reply, extended: the state is reused
python3 -c "import json; print(json.dumps({'prompt': json.load(open('$T/pids.json')) + json.load(open('$T/c2.json'))['ids'] + [100], 'max_tokens': 4}))" > "$T/ext.json"
post /completions "$(cat "$T/ext.json")" > "$T/c3.json"
expect "an extended prompt reuses the state (cached tokens)" \
  "L('c3')['usage']['prompt_tokens_details']['cached_tokens'] >= len(L('pids')) + len(L('c2')['ids']) - 1"
# stop strings: the reply ends before the first one, which is not returned
python3 -c "
import json
t = json.load(open('$T/rawref.json'))['text']
cut = next(i for i in range(4, len(t)) if t[i].strip())
stop = t[cut:cut + 2]
print(json.dumps({'stop': stop, 'want': t[:t.index(stop)]}))" > "$T/stop.json"
stop=$(js 'json.dumps(j["stop"])' < "$T/stop.json")
post /completions "{\"prompt\":\"$text\",\"max_tokens\":16,\"stop\":[\"zzzq\",$stop]}" > "$T/c4.json"
curl -sN --max-time 60 "$SRV_URL/completions" -d "{\"prompt\":\"$text\",\"max_tokens\":16,\"stop\":$stop,\"stream\":true}" > "$T/c5.txt"
sse "$T/c5.txt" > "$T/c5.json"
expect "stop strings end the reply before them, whole and streamed" \
  "L('c4')['choices'][0]['text'] == L('stop')['want'] and L('c4')['choices'][0]['finish_reason'] == 'stop' and
   L('c5')['text'] == L('stop')['want'] and L('c5')['finish'] == 'stop'"

# ---- tools, tool calls, tool results and a developer message are rendered
# as the model's chat format renders them (remora tokenize --chat)
python3 - > "$T/tools.json" <<'PY'
import json
tools = [{'type': 'function', 'function': {'name': 'add', 'description': 'adds two numbers',
          'parameters': {'type': 'object', 'properties': {'a': {'type': 'number'}, 'b': {'type': 'number'}}}}}]
msgs = [{'role': 'system', 'content': 'Use the tools.'},
        {'role': 'user', 'content': 'What is 2+3?'},
        {'role': 'assistant', 'content': None, 'reasoning_content': 'I should add.',
         'tool_calls': [{'id': 'call_1', 'type': 'function', 'function': {'name': 'add', 'arguments': '{"a": 2, "b": 3}'}}]},
        {'role': 'tool', 'tool_call_id': 'call_1', 'content': '5'},
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Thanks. '}, {'type': 'text', 'text': 'And 4+4?'}]}]
print(json.dumps({'messages': msgs, 'tools': tools}))
PY
"$BIN" tokenize --tokenizer "$m" --chat < "$T/tools.json" > "$T/tools.ids"
sed 's/"role": "system"/"role": "developer"/' "$T/tools.json" | python3 -c "
import json, sys; j = json.load(sys.stdin); j['max_tokens'] = 2; print(json.dumps(j))" > "$T/tools.req"
post /chat/completions "$(cat "$T/tools.req")" > "$T/tools.r.json"
expect "tools, tool calls, results and a developer message rendered as the chat format does" \
  "L('tools.r')['usage']['prompt_tokens'] == len(json.load(open('$T/tools.ids')))"

# ---- the other endpoints
curl -s "$SRV_URL/models" > "$T/models.json"
curl -s "$SRV_URL/models/k3-tiny" > "$T/model.json"
curl -s "http://127.0.0.1:$SRV_PORT/health" > "$T/health.json"
expect "models and health" \
  "L('models')['data'][0]['id'] == 'k3-tiny' and L('model')['id'] == 'k3-tiny' and
   L('health')['status'] == 'ok' and L('health')['state'] == 'idle' and L('health')['queue']['capacity'] == 4 and
   L('health')['model']['family'] == 'kimi_k3' and L('health')['model']['ram_plan']['budget_bytes'] > 0"
serve_stop
[ "$SRV_RC" = 0 ] && echo "ok   SIGTERM: exit 0" || { echo "FAIL SIGTERM: exit $SRV_RC"; fail=1; }

# ---- 503 while the model loads: the test's LD_PRELOAD shim holds the
# loader's open of config.json until the test lets it go (the loader
# refuses a FIFO in its place, so the hold stands in for a slow file system)
cc -shared -fPIC -O2 -o "$T/slow_open.so" tests/sh/lib/slow_open.c -ldl || { echo "FAIL cannot build the shim"; exit 1; }
SLOW_OPEN_NAME=/config.json SLOW_OPEN_GO="$T/go" LD_PRELOAD="$T/slow_open.so" \
  "$BIN" serve --model "$m" --port 0 > "$T/slow.log" 2>&1 &
SRV_PID=$!
i=0; while [ $i -lt 100 ] && ! grep -q listening "$T/slow.log" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
SRV_URL=http://127.0.0.1:$(sed -n 's/.*listening on http:.*:\([0-9]*\)\/v1.*/\1/p' "$T/slow.log")/v1
post /chat/completions "{\"messages\":[$user1]}" -D "$T/h503" > "$T/e503.json"
s503=$(cat "$T/status")
curl -s "${SRV_URL%/v1}/health" -o "$T/h.json" -w '%{http_code}' > "$T/hstatus"
touch "$T/go"
i=0; while [ $i -lt 100 ] && ! grep -q "ready\|loaded" "$T/slow.log" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
curl -s "${SRV_URL%/v1}/health" -o "$T/h2.json" -w '%{http_code}' > "$T/hstatus2"
serve_stop
[ "$s503" = 503 ] && grep -qi '^retry-after' "$T/h503" && [ "$(cat "$T/hstatus")" = 503 ] &&
  [ "$(js "j['status']" < "$T/h.json")" = loading ] && [ "$(js "j['error']['code']" < "$T/e503.json")" = model_loading ] \
  && [ "$(cat "$T/hstatus2")" = 200 ] \
  && echo "ok   503 with Retry-After while the model loads; /health says loading, then 200" \
  || { echo "FAIL 503 while loading: $s503, health $(cat "$T/hstatus") then $(cat "$T/hstatus2")"; cat "$T/slow.log"; fail=1; }

# ---- a model that cannot be opened (a FIFO in place of config.json: refused,
# not waited on): exit 2 naming the file
mkdir "$T/slow"
for f in "$m"/*; do ln -s "$f" "$T/slow/"; done
rm "$T/slow/config.json"
mkfifo "$T/slow/config.json"
timeout 20 "$BIN" serve --model "$T/slow" --port 0 > "$T/bad.log" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "slow/config.json: not a regular file" "$T/bad.log" \
  && echo "ok   a model that cannot be opened: exit 2 naming the file" || { echo "FAIL failed load: rc $rc"; cat "$T/bad.log"; fail=1; }
exit $fail
