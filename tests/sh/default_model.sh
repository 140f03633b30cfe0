#!/bin/sh
# The embedded model answers out of the box: `remora run --chat` on
# assets/model reasons in the think channel (stderr) and answers on stdout,
# and `remora eval` scores a few held-out items of every task.
set -u
BIN=build/rel/remora
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
$BIN run --model assets/model --prompt 'What is 37*12?' --chat > "$T/out" 2> "$T/err" || { cat "$T/err"; exit 1; }
grep -qx '444' "$T/out" || { echo "answer was: $(cat "$T/out")"; exit 1; }
grep -q '37' "$T/err" || { echo "no reasoning on stderr"; cat "$T/err"; exit 1; }
# one item of every task
python3 - > "$T/few.jsonl" <<'PY'
import json
seen = {}
for line in open("assets/eval/heldout.jsonl"):
    d = json.loads(line)
    if seen.get(d["task"], 0) < 1:
        seen[d["task"]] = seen.get(d["task"], 0) + 1
        print(json.dumps(d))
PY
$BIN eval --model assets/model --data "$T/few.jsonl" --json > "$T/eval" 2>/dev/null || { echo "eval failed"; exit 1; }
tail -1 "$T/eval" | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
print('eval: accuracy', d['accuracy'], 'nll', d['nll'], 'dead experts', d['dead_experts'])
assert d['items'] >= 14 and d['accuracy'] >= 0.8, d"
