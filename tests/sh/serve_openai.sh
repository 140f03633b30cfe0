#!/bin/sh
# `remora serve` driven by the official `openai` npm package (pinned,
# installed with npm into build/npm by lib/npm.sh and kept there, so
# reruns are fast; when the registry cannot be reached the test fails and
# says so). On both fixture models and the embedded model, the SDK's whole
# and streamed replies equal `remora run --chat` token for token, with the
# reasoning in reasoning_content; usage and the second turn's cached
# tokens; raw completions; the SDK's errors for a bad field, an unknown
# model, a missing key and a full queue (429 with Retry-After); a stream
# the SDK aborts stops the reply and the next request is served.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
. tests/sh/lib/npm.sh
fail=0

npm_ensure || exit 1
export REMORA_OPENAI_DIR=$NPM_DIR
echo "ok   openai@$(npm_have openai) from npm"

# sdk NAME MODE JSON: the client's result in $T/NAME.json
sdk() {
  timeout 120 node tests/sh/lib/openai_client.cjs "$2" "$3" > "$T/$1.json" 2> "$T/$1.err" \
    || { echo "FAIL the openai client ($1): $(tail -3 "$T/$1.err")"; echo '{}' > "$T/$1.json"; fail=1; }
}

P1="What is 12+7?"
P2="And 3+4?"
for m in "$FX/k3-tiny" "$FX/kl-tiny" assets/model; do
  serve_start "$BIN" "$m" || { fail=1; continue; }
  # the name the server gives the model (the embedded one is remora-k3-demo)
  name=$(curl -s "$SRV_URL/models" | python3 -c "import json,sys; print(json.load(sys.stdin)['data'][0]['id'])")
  run_ref "$m" "$P1" 24 "$T/conv.$name" || { fail=1; serve_stop; continue; }
  cp "$T/ref.json" "$T/ref1.json"
  base="\"base\":\"$SRV_URL\",\"model\":\"$name\""
  msgs="[{\"role\":\"user\",\"content\":\"$P1\"}]"
  sdk whole chat "{$base,\"messages\":$msgs,\"max_tokens\":24,\"temperature\":0}"
  expect "$name: the SDK's whole reply equals remora run --chat" \
    "L('whole')['content'] == L('ref1')['content'] and L('whole')['reasoning'] == L('ref1')['reasoning'] and
     L('whole')['usage']['completion_tokens'] - len(L('ref1')['ids']) in (0, 1) and
     L('whole')['usage']['prompt_tokens_details']['cached_tokens'] == 0"
  sdk stream chat "{$base,\"messages\":$msgs,\"max_tokens\":24,\"temperature\":0,\"stream\":true,
    \"stream_options\":{\"include_usage\":true},\"remora\":{\"stats\":true}}"
  expect "$name: the SDK's stream equals remora run --chat token for token" \
    "L('stream')['ids'] == L('ref1')['ids'] and L('stream')['content'] == L('ref1')['content'] and
     L('stream')['reasoning'] == L('ref1')['reasoning'] and L('stream')['usage'] == L('whole')['usage'] and
     L('stream')['finish'] == L('whole')['finish'] and L('stream')['kinds'].get('prompt') == 1"
  # turn 2: the SDK resends the history with the reasoning
  run_ref "$m" "$P2" 24 "$T/conv.$name" || fail=1
  python3 - "$T/ref1.json" "$P1" "$P2" "$SRV_URL" > "$T/turn2.arg" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
print(json.dumps({'base': sys.argv[4], 'max_tokens': 24, 'stream': True, 'stream_options': {'include_usage': True},
                  'remora': {'stats': True},
                  'messages': [{'role': 'user', 'content': sys.argv[2]},
                               {'role': 'assistant', 'content': a['content'], 'reasoning_content': a['reasoning']},
                               {'role': 'user', 'content': sys.argv[3]}]}))
PY
  sdk turn2 chat "$(cat "$T/turn2.arg")"
  expect "$name: the SDK's second turn equals remora run's" \
    "L('turn2')['ids'] == L('ref')['ids'] and L('turn2')['content'] == L('ref')['content'] and
     L('turn2')['reasoning'] == L('ref')['reasoning']"
  echo "     $name: turn 2 reused $(js "j['usage']['prompt_tokens_details']['cached_tokens']" < "$T/turn2.json") of $(js "j['usage']['prompt_tokens']" < "$T/turn2.json") prompt tokens"
  [ "$name" = model ] && expect "$name: the second turn reports the first as cached" \
    "L('turn2')['usage']['prompt_tokens_details']['cached_tokens'] >= L('stream')['usage']['total_tokens'] - 1"
  serve_stop
done

# ---- completions and errors through the SDK
M=$FX/k3-tiny
serve_start "$BIN" "$M" --queue 0 --max-tokens 1000000000 || exit 1
base="\"base\":\"$SRV_URL\",\"model\":\"k3-tiny\""
"$BIN" run --model "$M" --prompt "The quick brown fox" --max-new 16 > "$T/raw.out" 2>/dev/null
python3 -c "import json; print(json.dumps({'text': open('$T/raw.out', encoding='utf-8').read()[:-1]}))" > "$T/rawref.json"
sdk comp completion "{$base,\"prompt\":\"The quick brown fox\",\"max_tokens\":16}"
sdk comps completion "{$base,\"prompt\":\"The quick brown fox\",\"max_tokens\":16,\"stream\":true}"
expect "completions through the SDK equal remora run" \
  "L('comp')['text'] == L('rawref')['text'] and L('comps')['text'] == L('rawref')['text']"
sdk e400 chat "{$base,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"n\":2}"
sdk e404 chat "{\"base\":\"$SRV_URL\",\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"
expect "the SDK's errors: 400 naming the field, 404 for an unknown model" \
  "L('e400')['error']['status'] == 400 and L('e400')['error']['param'] == 'n' and
   L('e404')['error']['status'] == 404 and L('e404')['error']['code'] == 'model_not_found'"
# the queue holds nothing (--queue 0): with one reply running, the SDK gets 429
(curl -sN --max-time 120 "$SRV_URL/completions" -d '{"prompt":"hello","max_tokens":1000000000,"stream":true}' > /dev/null 2>&1) &
bgp=$!; PIDS="$PIDS $bgp"
i=0; while [ $i -lt 100 ] && ! curl -s "http://127.0.0.1:$SRV_PORT/health" | grep -q '"state":"busy"'; do sleep 0.1; i=$((i + 1)); done
sdk e429 chat "{$base,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"
kill $bgp
expect "a full queue: the SDK gets 429 with Retry-After" \
  "L('e429')['error']['status'] == 429 and int(L('e429')['error']['retry_after']) >= 1"
# the SDK aborts a stream: the reply stops and the next request is served
i=0; while [ $i -lt 100 ] && ! curl -s "http://127.0.0.1:$SRV_PORT/health" | grep -q '"state":"idle"'; do sleep 0.1; i=$((i + 1)); done
sdk abort completion "{$base,\"prompt\":\"hello\",\"max_tokens\":1000000000,\"stream\":true,\"abort_after\":3}"
i=0; while [ $i -lt 100 ] && ! curl -s "http://127.0.0.1:$SRV_PORT/health" | grep -q '"state":"idle"'; do sleep 0.05; i=$((i + 1)); done
sdk after completion "{$base,\"prompt\":\"The quick brown fox\",\"max_tokens\":16}"
expect "an aborted stream stops the reply; the next request is served" \
  "L('abort')['aborted'] and L('after')['text'] == L('rawref')['text']"
serve_stop

# ---- the key, through the SDK
KEY=sk-remora-sdk-$(date +%s%N)
REMORA_TEST_KEY=$KEY serve_start "$BIN" "$M" --api-key-env REMORA_TEST_KEY || exit 1
sdk nokey chat "{\"base\":\"$SRV_URL\",\"key\":\"wrong\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"
sdk key chat "{\"base\":\"$SRV_URL\",\"key\":\"$KEY\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2}"
expect "the SDK with a wrong key gets 401, with the key it is served" \
  "L('nokey')['error']['status'] == 401 and L('key')['usage']['completion_tokens'] >= 1"
serve_stop
exit $fail
