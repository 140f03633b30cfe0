#!/bin/sh
# The server's log (issue #29): one line per request with its time said
# once; a client that hangs up, mid-stream or before a whole reply, is a
# normal end ("client gone"), never an error line from libmicrohttpd nor
# "(connection failed)".
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d); trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
fail=0

msg='"messages":[{"role":"user","content":"hi"}]'
serve_start "$BIN" "$FX/k3-tiny" || exit 1
post /chat/completions "{$msg,\"max_tokens\":4}" > /dev/null
curl -sN --max-time 60 "$SRV_URL/chat/completions" -d "{$msg,\"max_tokens\":4,\"stream\":true}" > /dev/null
# hang up while the (long) reply runs: streamed, then whole
curl -sN --max-time 0.4 "$SRV_URL/chat/completions" -d "{$msg,\"max_tokens\":4000,\"stream\":true}" > /dev/null
curl -s --max-time 0.4 "$SRV_URL/chat/completions" -d "{$msg,\"max_tokens\":4000}" > /dev/null
# the line of the last hang-up is written when the server sees it
i=0; while [ $i -lt 50 ] && [ "$(grep -c ' 499 ' "$SRV_LOG")" -lt 1 ]; do sleep 0.1; i=$((i + 1)); done
serve_stop

lines=$(grep -c "POST /v1/chat/completions" "$SRV_LOG")
if [ "$lines" = 4 ] && ! grep -q "libmicrohttpd\|connection failed\|error" "$SRV_LOG"; then
  echo "ok   four requests, four lines, no error line for the two hang-ups"
else
  echo "FAIL the log ($lines request lines):"; cat "$SRV_LOG"; fail=1
fi
# each request line says its time once: "200 0.069 s: 25 prompt tokens ..., 0.00 s in the queue"
# (and, when the prefix cache kept or served a state, which of its tiers did)
bad=$(grep "POST /v1/chat/completions" "$SRV_LOG" | grep -v -E \
  ' (200|200 stream) [0-9.]+ s: [0-9]+ prompt tokens \([0-9]+ cached\), (the state before \([0-9]+ tokens\) kept (in RAM|on disk) in [0-9.]+ s, )?([0-9]+ restored from (RAM|disk) in [0-9.]+ s, )?[0-9]+ generated, [a-z_]+, [0-9.]+ s in the queue$| (200 stream|499) [0-9.]+ s: client gone, stopped$')
[ -z "$bad" ] && echo "ok   each line says its time once; the hang-ups say 'client gone'" \
  || { echo "FAIL unexpected log lines:"; echo "$bad"; fail=1; }
exit $fail
