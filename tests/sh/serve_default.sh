#!/bin/sh
# `remora serve` like the chat: without --model it serves the default model
# (./assets/model from the source tree), /v1/models names it as the chat's
# welcome does (its README's heading, "remora-k3-demo", not "model"), and a
# request naming that model is answered (the README's example, with curl).
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=build/rel/remora
T=$(mktemp -d); trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
fail=0
serve_start "$BIN" "" || exit 1
grep -q "model 'remora-k3-demo'" "$SRV_LOG" || { echo "FAIL: the start-up line does not name the model:"; cat "$SRV_LOG"; fail=1; }
id=$(curl -sf "$SRV_URL/models" | python3 -c "import json,sys; print(json.load(sys.stdin)['data'][0]['id'])")
[ "$id" = remora-k3-demo ] || { echo "FAIL: /v1/models names it '$id'"; fail=1; }
ans=$(curl -sf "$SRV_URL/chat/completions" -H 'Content-Type: application/json' \
  -d '{"model": "remora-k3-demo", "messages": [{"role": "user", "content": "What is 37*12?"}]}' |
  python3 -c "import json,sys; print(json.load(sys.stdin)['choices'][0]['message']['content'])")
[ "$ans" = 444 ] || { echo "FAIL: the default model answered '$ans'"; fail=1; }
serve_stop TERM
[ $fail = 0 ] && echo "ok: serve without --model serves remora-k3-demo and answers 444"
exit $fail
