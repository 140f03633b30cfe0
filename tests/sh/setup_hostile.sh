#!/bin/sh
# `remora setup` against a server at fault (tests/sh/lib/hostile_server.py):
# a config.json over its 16 MB cap and ranges whose Content-Range has no
# total ("bytes A-B/*") are the server's fault, not the user's: exit 1 (a
# runtime failure), with a message naming the file and the server's fault.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
python3 tests/sh/lib/hostile_server.py "$FX/k3-tiny" "$T/port" 120 2> "$T/server.err" &
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
exit $fail
