#!/bin/sh
# tokenize_cli.sh — `remora tokenize` against the tokenizer goldens: every
# string of encode_goldens.json (ids and, with --allow-special,
# ids_allow_special) and every conversation of chat_goldens.json with
# --chat; then bad input must exit 2 with a message on stderr.
cd "$(dirname "$0")/../.." || exit 2
BIN=${REMORA_BIN:-build/rel/remora}
FIX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
TOK=$FIX/tokenizer
[ -x "$BIN" ] || { echo "missing $BIN (run make MODE=rel unit)"; exit 1; }
[ -d "$TOK" ] || { echo "missing fixtures at $TOK"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

python3 - "$BIN" "$TOK" <<'PY' || exit 1
import json, subprocess, sys
bin_, tok = sys.argv[1], sys.argv[2]
def run(args, data):
    r = subprocess.run([bin_, "tokenize", "--tokenizer", tok] + args, input=data,
                       capture_output=True)
    if r.returncode != 0:
        sys.exit("remora tokenize %s: exit %d: %s" % (args, r.returncode, r.stderr.decode()))
    return json.loads(r.stdout)
cases = json.load(open(tok + "/encode_goldens.json"))["cases"]
texts = json.dumps([c["text"] for c in cases]).encode()
bad = 0
for args, key in (([], "ids"), (["--allow-special"], "ids_allow_special")):
    got = run(args, texts)
    assert len(got) == len(cases), "%d results for %d strings" % (len(got), len(cases))
    for c, g in zip(cases, got):
        if g != c[key]:
            bad += 1
            print("MISMATCH %s %r: got %s want %s" % (key, c["text"][:60], g[:20], c[key][:20]))
print("encode goldens: %d strings x 2 modes" % len(cases))
for c in json.load(open(tok + "/chat_goldens.json"))["chats"]:
    conv = {k: c[k] for k in ("messages", "tools", "thinking", "thinking_effort",
                              "add_generation_prompt")}
    g = run(["--chat"], json.dumps(conv).encode())
    if g != c["ids"]:
        bad += 1
        print("MISMATCH chat %s" % c["name"])
    else:
        print("chat %s: ok (%d ids)" % (c["name"], len(g)))
# an empty list, an empty string and one with a NUL byte
assert run([], b"[]") == []
assert run([], b'["", "a\\u0000b"]')[0] == []
sys.exit(1 if bad else 0)
PY

# bad input: exit status 2 and a message naming the problem
fails=0
expect2() { # $1 = label, $2 = stdin, $3 = expected stderr text, rest = options
  label=$1 input=$2 want=$3; shift 3
  printf '%s' "$input" | "$BIN" tokenize "$@" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 2 ] || ! grep -q -- "$want" "$tmp/err"; then
    echo "FAIL $label: exit $rc, stderr: $(cat "$tmp/err")"; fails=$((fails + 1))
  else
    echo "ok   $label: $(head -1 "$tmp/err")"
  fi
}
expect2 "invalid JSON"        '["abc"'   "line 1"               --tokenizer "$TOK"
expect2 "not an array"        '{"a":1}'  "JSON array of strings" --tokenizer "$TOK"
expect2 "non-string element"  '["a", 3]' "element 1"            --tokenizer "$TOK"
expect2 "missing --tokenizer" '[]'       "--tokenizer DIR"
expect2 "unknown option"      '[]'       "unknown"              --tokenizer "$TOK" --bogus
expect2 "missing tokenizer"   '[]'       "tiktoken.model"       --tokenizer "$tmp/none"
expect2 "chat: not an object" '[1]'      "not a JSON object"    --tokenizer "$TOK" --chat
expect2 "chat: no messages"   '{}'       "messages"             --tokenizer "$TOK" --chat
expect2 "chat: bad effort"    '{"messages":[],"thinking_effort":"x"}' "thinking_effort" --tokenizer "$TOK" --chat
mkdir "$tmp/badtok"
printf 'QQ== 0\n!!!! 1\n' > "$tmp/badtok/tiktoken.model"
echo '{}' > "$tmp/badtok/tokenizer_config.json"
expect2 "damaged tiktoken.model" '[]' "tiktoken.model line 2: bad base64" --tokenizer "$tmp/badtok"
[ $fails -eq 0 ]
