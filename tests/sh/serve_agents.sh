#!/bin/sh
# `remora serve` as agents use it, driven by the official `openai` and
# `@anthropic-ai/sdk` npm packages (pinned, installed with npm into
# build/npm by lib/npm.sh and kept there; when the registry cannot be
# reached the test says so and fails). The fixtures' replies are forced
# ($REMORA_TEST_REPLIES, one token per byte, so every tool block is split at
# every byte boundary) to a K3 tool call and a final answer, in turn:
# OpenAI tool calls whole and streamed (the SDK's stream helper and its
# runTools loop), the loop's second step reusing the state (cached tokens),
# the Anthropic Messages API whole and streamed (thinking, text, tool_use
# blocks, the event sequence, tool_result round trip, count_tokens,
# errors), a named and a required tool_choice, on k3-tiny and (OpenAI,
# its state being recurrent) kl-tiny; on the embedded model, a real
# calculator round trip with the openai SDK (call, result, answer from it;
# streamed; runTools with thinking on and off; no call for other questions
# or without a calculator) and both APIs' shapes. (Kimi-Linear's own im-format
# tool-call section has no fixture with its tokenizer: the unit tests
# test_toolcall.c cover it.) No marker text reaches any content. curl
# checks ?beta=true, x-api-key and unknown fields.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
. tests/sh/lib/npm.sh
fail=0; passed=0; failed=0

npm_ensure || exit 1
export REMORA_NPM_DIR=$NPM_DIR
echo "ok   openai@$(npm_have openai) and @anthropic-ai/sdk@$(npm_have @anthropic-ai/sdk) from npm"

export REMORA_TEST_KEY=test-key-123
# suite NAME MODEL [REPLIES]: a fresh server (replies forced when given), the suite's checks counted
suite() {
  if [ -n "${3:-}" ]; then printf '%s' "$3" > "$T/replies.json"; export REMORA_TEST_REPLIES=$T/replies.json
  else unset REMORA_TEST_REPLIES; fi
  serve_start "$BIN" "$2" --api-key-env REMORA_TEST_KEY || { failed=$((failed + 1)); return; }
  timeout 300 node tests/sh/lib/agents_client.cjs "$1" "http://127.0.0.1:$SRV_PORT" "$REMORA_TEST_KEY" > "$T/out" 2>&1
  cat "$T/out"
  passed=$((passed + $(grep -c '^ok' "$T/out"))); failed=$((failed + $(grep -c '^FAIL' "$T/out")))
  grep -q '^ok\|^FAIL' "$T/out" || { echo "FAIL $1: no result"; failed=$((failed + 1)); }
  [ "$1" = forced-anthropic ] && raw_checks
  serve_stop
  unset REMORA_TEST_REPLIES
}

expect() {
  if [ "$2" = "$3" ]; then echo "ok   $1"; passed=$((passed + 1)); else echo "FAIL $1: '$2', want '$3'"; failed=$((failed + 1)); fi
}

# curl on the Anthropic routes: ?beta=true, x-api-key, unknown fields, pings
raw_checks() {
  U=http://127.0.0.1:$SRV_PORT
  curl -s --max-time 60 "$U/v1/messages/count_tokens?beta=true" -H "x-api-key: $REMORA_TEST_KEY" \
    -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' \
    -d '{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":{"user_id":"u"},"context_management":{}}' \
    > "$T/ct"
  expect "count_tokens?beta=true with x-api-key and unknown fields" "$(js "'input_tokens' in j" < "$T/ct")" True
  curl -s --max-time 60 -o /dev/null -w '%{http_code}' "$U/v1/messages" -H 'content-type: application/json' \
    -d '{"model":"m","max_tokens":4,"messages":[{"role":"user","content":"hi"}]}' > "$T/st"
  expect "no key: 401" "$(cat "$T/st")" 401
  curl -s --max-time 60 "$U/v1/messages?beta=true" -H "Authorization: Bearer $REMORA_TEST_KEY" \
    -H 'content-type: application/json' -d '{"model":"m","max_tokens":400,"stream":true,"cache_control":{},
    "messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}' > "$T/sse"
  expect "a stream starts with message_start and a ping" "$(sed -n '1p;4p' "$T/sse" | tr '\n' ' ')" \
    "event: message_start event: ping "
  expect "a stream ends with message_stop" "$(grep '^event:' "$T/sse" | tail -1)" "event: message_stop"
  expect "no marker text in the stream" "$(grep -c '<|' "$T/sse")" 0
  # a long prompt (about 10 s of prefill on k3-tiny): pings while it is processed
  python3 -c "import json; print(json.dumps({'model': 'm', 'max_tokens': 8, 'stream': True, 'messages': [
    {'role': 'user', 'content': ' '.join('word%d' % i for i in range(1200))}]}))" > "$T/long.json"
  curl -s --max-time 300 "$U/v1/messages" -H "x-api-key: $REMORA_TEST_KEY" -H 'content-type: application/json' \
    -d @"$T/long.json" > "$T/sse"
  p=$(grep -c '^event: ping' "$T/sse")
  expect "pings while a long prompt is processed ($p)" "$([ "$p" -ge 2 ] && echo yes)" yes
}

A='I will check.<|close|>think<|sep|><|open|>response<|sep|>Let me look.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Pa\"ris 😀<|close|>argument<|sep|><|open|>argument key=\"days\" type=\"number\"<|sep|> 3<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'
B='Done.<|close|>think<|sep|><|open|>response<|sep|>It is sunny in Paris.<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>'
suite forced-openai "$FX/k3-tiny" "[\"$A\", \"$B\"]"
suite forced-anthropic "$FX/k3-tiny" "[\"$A\", \"$B\"]"
suite forced-openai "$FX/kl-tiny" "[\"$A\", \"$B\"]"
N='<|open|>argument key=\"city\" type=\"string\"<|sep|>Oslo<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'
R='<|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'
suite forced-choice "$FX/k3-tiny" "[\"$N\", \"$R\"]"
suite embedded assets/model
[ $fail -eq 0 ] || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
