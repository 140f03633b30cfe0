#!/bin/sh
# `remora serve` refusing what it must: every malformed or unsupported
# request gets its HTTP status and an OpenAI error object naming the field
# (bad JSON, wrong types, values it cannot honour, unknown model, unknown
# path or method, a body over --max-body with and without a length); on a
# loopback bind a Host or Origin that is not loopback is refused (DNS
# rebinding); with --api-key-env a missing or wrong key gets 401 and the key
# never reaches the log; a non-loopback bind without a key, an unset key
# variable and bad option values exit 2; an IPv6 loopback bind serves.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
M=$FX/k3-tiny
T=$(mktemp -d); trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
fail=0

# refused NAME STATUS CODE PARAM CURL-ARGS...: the request gets STATUS and
# an error object with the four fields, code CODE and param PARAM ("-":
# null); every other header and body detail is left to the other checks.
refused() {
  name=$1; want=$2; code=$3; param=$4; shift 4
  got=$(curl -s --max-time 30 -o "$T/e.json" -w '%{http_code}' "$@")
  if [ "$got" = "$want" ] && python3 -c "
import json, sys
e = json.load(open('$T/e.json'))['error']
assert sorted(e) == ['code', 'message', 'param', 'type'], e
assert e['code'] == ('$code' if '$code' != '-' else None), e
assert e['param'] == ('$param' if '$param' != '-' else None), e
assert e['message'] and e['type'], e" 2> "$T/why"; then
    echo "ok   $name: $want"
  else
    echo "FAIL $name: got $got, want $want ($code, $param): $(cat "$T/e.json" "$T/why" | head -3)"; fail=1
  fi
}

serve_start "$BIN" "$M" --max-body 0.01 || exit 1
C=$SRV_URL/chat/completions
msg='"messages":[{"role":"user","content":"hi"}]'
chat() { refused "$1" "$2" "$3" "$4" "$C" -H 'Content-Type: application/json' --data-binary "$5"; }
chat "bad JSON" 400 invalid_json - '{"messages": [}'
chat "not an object" 400 invalid_value - '[1, 2]'
chat "no messages" 400 invalid_value messages '{"model": "k3-tiny"}'
chat "empty messages" 400 invalid_value messages '{"messages": []}'
chat "a message not an object" 400 invalid_value 'messages[0]' '{"messages": ["hi"]}'
chat "role of the wrong type" 400 invalid_value 'messages[0].role' '{"messages": [{"role": 1, "content": "x"}]}'
chat "unknown role" 400 invalid_value 'messages[0].role' '{"messages": [{"role": "wizard", "content": "x"}]}'
chat "content of the wrong type" 400 invalid_value 'messages[0].content' '{"messages": [{"role": "user", "content": 5}]}'
chat "an image part" 400 unsupported_value 'messages[0].content[0]' \
  '{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}'
chat "a tool result for no tool" 400 invalid_value messages '{"messages": [{"role": "tool", "content": "42"}]}'
chat "temperature of the wrong type" 400 invalid_value temperature "{$msg, \"temperature\": \"hot\"}"
chat "temperature out of range" 400 invalid_value temperature "{$msg, \"temperature\": 3}"
chat "top_p 0" 400 invalid_value top_p "{$msg, \"top_p\": 0}"
chat "max_tokens 0" 400 invalid_value max_tokens "{$msg, \"max_tokens\": 0}"
chat "max_tokens a string" 400 invalid_value max_tokens "{$msg, \"max_tokens\": \"5\"}"
chat "max_completion_tokens 1.5" 400 invalid_value max_completion_tokens "{$msg, \"max_completion_tokens\": 1.5}"
chat "stream not a boolean" 400 invalid_value stream "{$msg, \"stream\": \"yes\"}"
chat "seed negative" 400 invalid_value seed "{$msg, \"seed\": -1}"
chat "stop not a string" 400 invalid_value stop "{$msg, \"stop\": 5}"
chat "n 2" 400 unsupported_value n "{$msg, \"n\": 2}"
chat "logprobs" 400 unsupported_value logprobs "{$msg, \"logprobs\": true}"
chat "presence_penalty" 400 unsupported_value presence_penalty "{$msg, \"presence_penalty\": 0.5}"
chat "logit_bias" 400 unsupported_value logit_bias "{$msg, \"logit_bias\": {\"5\": 10}}"
chat "tool_choice required without tools" 400 invalid_value tool_choice "{$msg, \"tool_choice\": \"required\"}"
chat "tool_choice an unknown string" 400 invalid_value tool_choice "{$msg, \"tool_choice\": \"always\"}"
chat "an unknown response_format" 400 unsupported_value response_format "{$msg, \"response_format\": {\"type\": \"grammar\"}}"
chat "reasoning_effort" 400 invalid_value reasoning_effort "{$msg, \"reasoning_effort\": \"extreme\"}"
chat "chat_template_kwargs.thinking" 400 invalid_value chat_template_kwargs.thinking \
  "{$msg, \"chat_template_kwargs\": {\"thinking\": \"no\"}}"
chat "remora.stats" 400 invalid_value remora.stats "{$msg, \"remora\": {\"stats\": 1}}"
chat "unknown model" 404 model_not_found model "{$msg, \"model\": \"gpt-4o\"}"
X=$SRV_URL/completions
comp() { refused "$1" "$2" "$3" "$4" "$X" -H 'Content-Type: application/json' --data-binary "$5"; }
comp "completion without a prompt" 400 invalid_value prompt '{"max_tokens": 3}'
comp "two prompts" 400 unsupported_value prompt '{"prompt": ["a", "b"]}'
comp "an id outside the vocabulary" 400 invalid_value prompt '{"prompt": [1, 99999999]}'
comp "a prompt of the wrong type" 400 invalid_value prompt '{"prompt": {"text": "a"}}'
comp "echo" 400 unsupported_value echo '{"prompt": "a", "echo": true}'
comp "best_of 3" 400 unsupported_value best_of '{"prompt": "a", "best_of": 3}'
refused "unknown path" 404 not_found - "$SRV_URL/engines"
refused "GET of a POST endpoint" 405 method_not_allowed - "$C"
refused "POST of a GET endpoint" 405 method_not_allowed - -X POST "$SRV_URL/models"
refused "another model's card" 404 model_not_found model "$SRV_URL/models/gpt-4o"
curl -s -D "$T/h" -o /dev/null "$C"
grep -qi '^allow: POST' "$T/h" && echo "ok   405 says Allow: POST" || { echo "FAIL 405 without Allow"; fail=1; }
# the body limit (10 kB here), declared and chunked
head -c 20000 /dev/zero | tr '\0' a > "$T/big"
refused "a body over --max-body" 413 request_too_large - "$C" --data-binary @"$T/big"
refused "a chunked body over --max-body" 413 request_too_large - "$C" -H 'Transfer-Encoding: chunked' --data-binary @"$T/big"
# unknown fields are ignored
post /chat/completions "{$msg, \"max_tokens\": 2, \"user\": \"u1\", \"metadata\": {\"a\": 1}, \"store\": false,
  \"parallel_tool_calls\": true, \"n\": 1, \"logprobs\": false, \"presence_penalty\": 0, \"tool_choice\": \"auto\",
  \"response_format\": {\"type\": \"text\"}, \"frobnicate\": [1]}" > /dev/null
[ "$(cat "$T/status")" = 200 ] && echo "ok   unknown and neutral fields are ignored" || { echo "FAIL neutral fields: $(cat "$T/status") $(cat "$T/body")"; fail=1; }
# DNS rebinding: a loopback server answers loopback names only
H=http://127.0.0.1:$SRV_PORT/health
refused "Host not loopback" 403 forbidden_host - "$H" -H 'Host: evil.example'
refused "Host that only starts with localhost" 403 forbidden_host - "$H" -H 'Host: localhost.evil.example:80'
refused "Host missing" 403 forbidden_host - -0 "$H" -H 'Host:'
refused "Origin not loopback" 403 forbidden_origin - "$H" -H 'Origin: http://evil.example'
for h in "localhost:$SRV_PORT" "127.0.0.1" "[::1]:80" "LOCALHOST" "app.localhost" "127.1.2.3:9"; do
  s=$(curl -s -o /dev/null -w '%{http_code}' "$H" -H "Host: $h" -H 'Origin: http://localhost:3000')
  [ "$s" = 200 ] || { echo "FAIL Host $h refused: $s"; fail=1; }
done
echo "ok   loopback Host names and origins are served"
serve_stop

# ---- the API key: from the environment only, required, never logged
KEY=sk-remora-test-$(date +%s%N)
REMORA_TEST_KEY=$KEY serve_start "$BIN" "$M" --api-key-env REMORA_TEST_KEY || exit 1
refused "no key" 401 invalid_api_key - "$SRV_URL/models"
refused "wrong key" 401 invalid_api_key - "$SRV_URL/models" -H "Authorization: Bearer ${KEY}x"
refused "a prefix of the key" 401 invalid_api_key - "$SRV_URL/models" -H "Authorization: Bearer ${KEY%?}"
refused "the key not as a bearer token" 401 invalid_api_key - "$SRV_URL/models" -H "Authorization: $KEY"
curl -s -D "$T/h" -o /dev/null "$SRV_URL/models"
grep -qi '^www-authenticate: Bearer' "$T/h" || { echo "FAIL 401 without WWW-Authenticate"; fail=1; }
s=$(curl -s -o /dev/null -w '%{http_code}' "$SRV_URL/models" -H "Authorization: Bearer $KEY")
s2=$(post /chat/completions "{$msg, \"max_tokens\": 2}" -H "Authorization: Bearer $KEY" > /dev/null; cat "$T/status")
s3=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SRV_PORT/health")
[ "$s" = 200 ] && [ "$s2" = 200 ] && [ "$s3" = 200 ] && echo "ok   the right key is served; /health needs none" \
  || { echo "FAIL right key: $s $s2 health $s3"; fail=1; }
serve_stop
grep -q "$KEY" "$SRV_LOG" && { echo "FAIL the key is in the log"; fail=1; } || echo "ok   the key is not in the log"

# ---- start-up refusals: exit 2 and a message
"$BIN" serve --model "$M" --host 0.0.0.0 --port 0 > /dev/null 2> "$T/err" < /dev/null; rc=$?
[ $rc = 2 ] && grep -q "needs an API key" "$T/err" && echo "ok   a non-loopback bind without a key: exit 2" \
  || { echo "FAIL open bind: rc $rc $(cat "$T/err")"; fail=1; }
env -u REMORA_UNSET_KEY "$BIN" serve --model "$M" --api-key-env REMORA_UNSET_KEY --port 0 > /dev/null 2> "$T/err"; rc=$?
[ $rc = 2 ] && grep -q "REMORA_UNSET_KEY: the environment variable is not set" "$T/err" \
  && echo "ok   an unset key variable: exit 2" || { echo "FAIL unset key: rc $rc"; fail=1; }
for a in "--port 65536" "--port -1" "--queue -1" "--queue x" "--max-tokens 0" "--max-body 0" "--keep-alive 0" \
         "--idle-timeout 0" "--max-connections 0" "--temperature 11" "--host" "--bogus"; do
  "$BIN" serve --model "$M" $a > /dev/null 2> "$T/err" < /dev/null; rc=$?
  [ $rc = 2 ] || { echo "FAIL serve $a: rc $rc"; fail=1; }
done
"$BIN" serve --model "$T/none" --port 0 > /dev/null 2> "$T/err"; rc=$?
[ $rc = 2 ] && grep -q "config.json" "$T/err" || { echo "FAIL missing model: rc $rc"; fail=1; }
echo "ok   bad options and a missing model: exit 2"

# ---- IPv6 loopback
serve_start "$BIN" "$M" --host ::1 || exit 1
s=$(curl -s -o "$T/m.json" -w '%{http_code}' "http://[::1]:$SRV_PORT/v1/models")
[ "$s" = 200 ] && grep -q "listening on http://\[::1\]:" "$SRV_LOG" && echo "ok   an IPv6 loopback bind serves" \
  || { echo "FAIL ::1: $s"; fail=1; }
serve_stop
exit $fail
