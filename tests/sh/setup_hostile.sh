#!/bin/sh
# `remora setup` against a server at fault (tests/sh/lib/hostile_server.py):
# a config.json over its 16 MB cap and ranges whose Content-Range has no
# total ("bytes A-B/*") are the server's fault, not the user's: exit 1 (a
# runtime failure), with a message naming the file and the server's fault;
# a server without ETags gets a revision from Last-Modified and the size.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
cp -r "$FX/k3-tiny" "$T/up"
python3 tests/sh/lib/hostile_server.py "$T/up" "$T/port" 120 2> "$T/server.err" &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
U=http://127.0.0.1:$(cat "$T/port")
fail=0
check() { # NAME MODE WANT-RC WANT-TEXT
  timeout 60 "$BIN" setup --source "$U/$2" --dir "$T/$2" --stream > /dev/null 2> "$T/err"
  rc=$?
  if [ $rc = "$3" ] && grep -q "$4" "$T/err"; then echo "ok   $1: exit $rc"
  else echo "FAIL $1: exit $rc, want $3 '$4': $(cat "$T/err")"; fail=1; fi
}
check "a config.json over the cap" bigconfig 1 "config.json: the file is larger than 16777216 bytes, the cap of this file (the server sent more than a valid file holds)"
check "a Content-Range with no total" nototal 1 "the server's fault: it did not give the file size in Content-Range"
# a server without ETags: the revision is Last-Modified and the size, and a
# file changed upstream afterwards (a new date) is refused, not mixed in

timeout 60 "$BIN" setup --source "$U/noetag" --dir "$T/ne" --stream > /dev/null 2> "$T/err" || { echo "FAIL noetag setup: $(cat "$T/err")"; fail=1; }
grep -q '"lm:[A-Za-z]*, [0-9]* [A-Za-z]* [0-9]* [0-9:]* GMT;[0-9]*"' "$T/ne/.remora/source.json" &&
  echo "ok   no ETag: the revision is Last-Modified and the size" || { echo "FAIL no lm: revision: $(cat "$T/ne/.remora/source.json")"; fail=1; }
touch -d '2020-01-01 00:00:00' "$T/up"/model-*.safetensors
timeout 60 "$BIN" run --model "$T/ne" --prompt "The quick brown fox" --max-new 4 > /dev/null 2> "$T/err"
rc=$?
[ $rc = 1 ] && grep -q "the file changed upstream" "$T/err" &&
  echo "ok   no ETag: a shard with a new Last-Modified upstream is refused (exit 1)" || { echo "FAIL changed upstream: exit $rc: $(cat "$T/err")"; fail=1; }
exit $fail
