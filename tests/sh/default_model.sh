#!/bin/sh
# The embedded model answers out of the box: `remora run --chat` on
# assets/model reasons in the think channel (stderr) and answers on stdout,
# and `remora eval` scores a held-out item of every task, reading the
# history, think and accept fields of the new ones (assets/eval/README.md).
set -u
BIN=build/rel/remora
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
$BIN run --model assets/model --prompt 'What is 37*12?' --chat > "$T/out" 2> "$T/err" || { cat "$T/err"; exit 1; }
grep -qx '444' "$T/out" || { echo "answer was: $(cat "$T/out")"; exit 1; }
grep -q '37' "$T/err" || { echo "no reasoning on stderr"; cat "$T/err"; exit 1; }
# one item of every task of the original set, and of each task of the new
# items (multi-turn with their history, thinking off, self-description
# with its accepted answers), which eval must read; not the tool items
# (remora eval declares no tools: serve_agents.sh runs the tool round trip)
python3 - > "$T/few.jsonl" <<'PY'
import json
seen = {}
for line in open("assets/eval/heldout.jsonl"):
    d = json.loads(line)
    if "tools" not in d and seen.get(d["task"], 0) < 1:
        seen[d["task"]] = seen.get(d["task"], 0) + 1
        print(json.dumps(d))
PY
$BIN eval --model assets/model --data "$T/few.jsonl" --json > "$T/eval" 2>/dev/null || { echo "eval failed"; exit 1; }
tail -1 "$T/eval" | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
new = ('multi_turn', 'multi_turn_no_think', 'no_think', 'greeting', 'about_self', 'out_of_scope')
old = {k: v for k, v in d['tasks'].items() if k not in new}
acc = sum(v['accuracy'] for v in old.values()) / len(old)
print('eval: accuracy on the original tasks', acc, 'overall', d['accuracy'], 'nll', d['nll'], 'dead experts', d['dead_experts'])
assert len(old) >= 14 and acc >= 0.8, d
for t in new: assert t in d['tasks'] and d['tasks'][t]['items'] == 1, t
assert d['tasks']['multi_turn']['accuracy'] == 1 and d['tasks']['greeting']['accuracy'] == 1, d"
# a malformed item is bad input naming the file and line
printf '{"task":"x","prompt":"hi","reference":"a"}\n{"task":"x","prompt":"hi","reference":"a","history":"nope"}\n' > "$T/bad.jsonl"
$BIN eval --model assets/model --data "$T/bad.jsonl" > /dev/null 2> "$T/bad.err"; rc=$?
[ $rc = 2 ] && grep -q "bad.jsonl:2: \"history\" must be" "$T/bad.err" || { echo "bad history: rc $rc, $(cat "$T/bad.err")"; exit 1; }
