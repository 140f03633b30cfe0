#!/bin/sh
# Interleaved conversations on `remora serve` (curl): a conversation's
# second turn, sent after three requests of other conversations, resumes
# from its own state (the server keeps a state in the prefix cache before
# another conversation's prompt replaces it) and reports cached tokens
# covering its first turn, prompt and reply; on both APIs. The states stay
# in the prefix cache's RAM tier (the default): the log says the restore
# came from RAM, and the disk holds no entry while the server runs; with the
# RAM tier off (REMORA_PREFIX_RAM_GB=0, OpenAI) they come from the disk.
# The replies are forced ($REMORA_TEST_REPLIES) to tool calls, so the first
# turn's reply comes back as the tokens it was sampled as (the call id's
# replay).
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
fail=0; passed=0; failed=0
A='I will check.<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'
B='Done.<|close|>think<|sep|><|open|>response<|sep|>Sunny.<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>'
printf '["%s", "%s", "%s", "%s", "%s"]' "$A" "$A" "$A" "$A" "$B" > "$T/replies.json"
export REMORA_TEST_REPLIES=$T/replies.json REMORA_PREFIX_CACHE_GB=1 XDG_CACHE_HOME=$T/cache
TOOLS='[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]'

expect() {
  if python3 -c "import json,sys; r=[json.load(open(f)) for f in sys.argv[1:]]; assert $2, r" "$T"/r*.json 2> "$T/err"; then
    echo "ok   $1"; passed=$((passed + 1))
  else echo "FAIL $1: $(tail -1 "$T/err" | cut -c1-400)"; failed=$((failed + 1)); fi
}

# tier WHAT API PATH TIER: the last request line of PATH says its state was
# restored from TIER (RAM or disk); from RAM, the disk holds no entry yet.
tier() {
  line=$(grep "POST /v1/$3" "$SRV_LOG" | tail -1)
  n=$(find "$T/cache" -name '*.snap' 2>/dev/null | wc -l)
  if echo "$line" | grep -q "restored from $4 in " && { [ "$4" = disk ] || [ "$n" = 0 ]; }; then
    echo "ok   $2: $1 restored from $4"; passed=$((passed + 1))
  else echo "FAIL $2: $1 not restored from $4 ($n entries on the disk): $line"; failed=$((failed + 1)); fi
}

# OpenAI: A1, B1, C1, D1 (other conversations), A2; with the RAM tier, then without
for TIER in RAM disk; do
rm -rf "$T/cache"
if [ $TIER = disk ]; then export REMORA_PREFIX_RAM_GB=0; else unset REMORA_PREFIX_RAM_GB; fi
serve_start "$BIN" "$FX/k3-tiny" || exit 1
ask() { post /chat/completions "{\"max_tokens\":300,\"tools\":$TOOLS,\"messages\":[{\"role\":\"user\",\"content\":\"$1\"}]}"; }
ask "Weather in Paris for the first conversation?" > "$T/r1.json"
for c in "Second conversation" "A third one, about Rome" "The fourth, about Oslo"; do ask "$c" > /dev/null; done
python3 - "$T/r1.json" "$TOOLS" > "$T/a2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))['choices'][0]['message']
print(json.dumps({"max_tokens": 300, "tools": json.loads(sys.argv[2]), "messages": [
    {"role": "user", "content": "Weather in Paris for the first conversation?"}, m,
    {"role": "tool", "tool_call_id": m['tool_calls'][0]['id'], "content": "sunny"}]}))
PY
post /chat/completions "$(cat "$T/a2")" > "$T/r2.json"
expect "openai ($TIER): the second turn after three other conversations reuses its first turn" \
  "r[1]['usage']['prompt_tokens_details']['cached_tokens'] >= r[0]['usage']['prompt_tokens'] + r[0]['usage']['completion_tokens'] - 1"
python3 -c "import json,sys; r=[json.load(open(f)) for f in sys.argv[1:]]; print('     openai: first turn %d + %d tokens; second turn %d cached of %d' % (r[0]['usage']['prompt_tokens'], r[0]['usage']['completion_tokens'], r[1]['usage']['prompt_tokens_details']['cached_tokens'], r[1]['usage']['prompt_tokens']))" "$T/r1.json" "$T/r2.json"
tier "the second turn" openai chat/completions $TIER
serve_stop
done
unset REMORA_PREFIX_RAM_GB

# Anthropic, the same (a fresh cache)
rm -rf "$T/cache"
serve_start "$BIN" "$FX/k3-tiny" || exit 1
U=http://127.0.0.1:$SRV_PORT/v1/messages
ATOOLS='[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]'
aask() { curl -s --max-time 120 "$U" -H 'content-type: application/json' \
  -d "{\"model\":\"m\",\"max_tokens\":300,\"tools\":$ATOOLS,\"messages\":[{\"role\":\"user\",\"content\":\"$1\"}]}"; }
aask "Weather in Paris for the first conversation?" > "$T/r1.json"
for c in "Second conversation" "A third one, about Rome" "The fourth, about Oslo"; do aask "$c" > /dev/null; done
python3 - "$T/r1.json" "$ATOOLS" > "$T/a2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
tu = [b for b in m['content'] if b['type'] == 'tool_use'][0]
print(json.dumps({"model": "m", "max_tokens": 300, "tools": json.loads(sys.argv[2]), "messages": [
    {"role": "user", "content": "Weather in Paris for the first conversation?"},
    {"role": "assistant", "content": m['content']},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tu['id'], "content": "sunny"}]}]}))
PY
curl -s --max-time 120 "$U" -H 'content-type: application/json' -d @"$T/a2" > "$T/r2.json"
expect "anthropic: the second turn after three other conversations reuses its first turn" \
  "r[1]['usage']['cache_read_input_tokens'] >= r[0]['usage']['input_tokens'] + r[0]['usage']['output_tokens'] - 1"
python3 -c "import json,sys; r=[json.load(open(f)) for f in sys.argv[1:]]; print('     anthropic: first turn %d + %d tokens; second turn %d cached, %d computed' % (r[0]['usage']['input_tokens'], r[0]['usage']['output_tokens'], r[1]['usage']['cache_read_input_tokens'], r[1]['usage']['input_tokens']))" "$T/r1.json" "$T/r2.json"
tier "the second turn" anthropic messages RAM
serve_stop
# closed: the RAM tier's states are on the disk now
n=$(find "$T/cache" -name '*.snap' | wc -l)
if [ "$n" -ge 4 ]; then echo "ok   the server's exit wrote its RAM tier to the disk ($n entries)"; passed=$((passed + 1))
else echo "FAIL $n entries on the disk after the server's exit"; failed=$((failed + 1)); fi
[ $fail -eq 0 ] || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
