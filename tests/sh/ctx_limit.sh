#!/bin/sh
# The context limit holds while a reply grows, not only at its start: a
# 10-token prompt under --max-ctx 15 with --max-new 40 gets 5 tokens, the
# same 5 an unlimited run begins with; under the model's own
# max_position_embeddings (a config copied with 16) likewise.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
status=0
p="The quick brown fox jumps over the lazy dog and"
tokens() { sed -n 's/.* over \([0-9]*\) tokens.*/\1/p' "$T/err"; }
# prefix A B: A's text (without its closing newline) begins B's
prefix() { python3 -c "import sys; a, b = (open(f, 'rb').read() for f in sys.argv[1:]); sys.exit(not b.startswith(a[:-1]))" "$1" "$2"; }
timeout 60 "$BIN" run --model "$FX/k3-tiny" --prompt "$p" --max-new 40 > "$T/free" 2> "$T/err"
[ "$(tokens)" = 40 ] || { echo "FAIL the unlimited run gave $(tokens) tokens: $(cat "$T/err")"; status=1; }
timeout 60 "$BIN" run --model "$FX/k3-tiny" --prompt "$p" --max-new 40 --max-ctx 15 > "$T/cut" 2> "$T/err"
rc=$?
grep -q "ctx 10," "$T/err" && [ $rc = 0 ] && [ "$(tokens)" = 5 ] && prefix "$T/cut" "$T/free" &&
  echo "ok   --max-ctx 15: the reply ends at the limit (5 tokens), as the unlimited reply begins" ||
  { echo "FAIL --max-ctx: exit $rc, $(tokens) tokens: $(cat "$T/err")"; status=1; }
cp -r "$FX/k3-tiny" "$T/m"
python3 - "$T/m/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
tc = c.get('text_config', c)
tc['max_position_embeddings'] = 16
json.dump(c, open(sys.argv[1], 'w'))
PY
timeout 60 "$BIN" run --model "$T/m" --prompt "$p" --max-new 40 > "$T/cut2" 2> "$T/err"
rc=$?
[ $rc = 0 ] && [ "$(tokens)" = 6 ] && echo "ok   max_position_embeddings 16: the reply ends at the limit (6 tokens)" ||
  { echo "FAIL max_position_embeddings: exit $rc, $(tokens) tokens: $(cat "$T/err")"; status=1; }
exit $status
