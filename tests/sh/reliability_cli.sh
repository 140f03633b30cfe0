#!/bin/sh
# reliability_cli.sh — hostile local inputs (issue #14), each with its exit
# status and message: FIFOs in place of model files, the context limit,
# write errors on stdout, the trace and `logits --out` (a full tmpfs or a
# loop-mounted image; skipped with a message where neither can be mounted),
# transcripts (a folder, a missing folder, CRLF, invalid UTF-8), NUL and
# empty prompts, eval items, a config or checkpoint that disagree, oversized
# files and malformed `tokenize --chat` conversations.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
[ -d "$FX/k3-tiny" ] || { echo "fixtures missing: $FX"; exit 1; }
BIN=build/rel/remora
T=$(mktemp -d)
MNT=
cleanup() {
  [ -n "$MNT" ] && umount "$MNT" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
ok() { echo "ok   $*"; }
# expect NAME STATUS TEXT CMD...: runs CMD (at most 20 s), wants the status and TEXT on stderr
expect() {
  name=$1 want=$2 text=$3; shift 3
  timeout 20 "$@" >"$T/out" 2>"$T/err" </dev/null; rc=$?
  if [ $rc = "$want" ] && grep -qF -- "$text" "$T/err"; then ok "$name"
  else bad "$name: rc=$rc (want $want), stderr: $(head -c 400 "$T/err")"; fi
}
# model NAME FROM: a model directory of symlinks to fixture FROM's files
model() { mkdir -p "$T/$1"; for mf in "$FX/$2"/*; do ln -s "$mf" "$T/$1/"; done; }

# -- finding 4: a FIFO in place of a file the model opens is refused at once
for f in model-00003-of-000010.safetensors config.json model.safetensors.index.json tiktoken.model tokenizer_config.json; do
  d=fifo-$f; model "$d" k3-tiny; rm "$T/$d/$f"; mkfifo "$T/$d/$f"
  expect "FIFO $f" 2 "$T/$d/$f: not a regular file (a FIFO)" $BIN run --model "$T/$d" --prompt hi --max-new 2
done
mkfifo "$T/tr.fifo"
expect "FIFO transcript" 2 "not a regular file" $BIN run --model "$FX/k3-tiny" --prompt hi --transcript "$T/tr.fifo"

# -- finding 2: a context past the limit is refused before any prefill
model small-ctx kl-tiny; rm "$T/small-ctx/config.json"
python3 -c "import json,sys; c=json.load(open(sys.argv[1])); c['max_position_embeddings']=64; json.dump(c, open(sys.argv[2],'w'))" \
  "$FX/kl-tiny/config.json" "$T/small-ctx/config.json"
python3 -c "print('word ' * 400)" > "$T/long.txt"
expect "context past max_position_embeddings" 2 "past the limit of 64 (the model's max_position_embeddings)" \
  $BIN run --model "$T/small-ctx" --prompt "$(cat "$T/long.txt")" --trace "$T/ctx.trace"
[ ! -s "$T/ctx.trace" ] || bad "the refused context was prefilled (trace written)"
expect "context past --max-ctx" 2 "past the limit of 3 (--max-ctx)" $BIN run --model "$FX/k3-tiny" --prompt "one two three four five" --max-ctx 3
expect "chat context past --max-ctx" 2 "past the limit of 5 (--max-ctx)" $BIN run --model "$FX/k3-tiny" --chat --prompt "one two three" --max-ctx 5
timeout 20 $BIN run --model "$T/small-ctx" --prompt - < "$T/long.txt" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "the context is [0-9]* tokens, past the limit of 64" "$T/err" && ok "context from stdin" || bad "stdin context: rc=$rc $(cat "$T/err")"

# -- finding 11: stdout write errors; EPIPE stays quiet
expect "run > /dev/full" 1 "cannot write the answer to standard output: No space left on device" \
  sh -c "$BIN run --model '$FX/k3-tiny' --prompt 'The quick' --max-new 8 > /dev/full"
expect "run >&-" 1 "cannot write the answer to standard output" sh -c "$BIN run --model '$FX/k3-tiny' --prompt 'The quick' --max-new 8 >&-"
$BIN run --model "$FX/k3-tiny" --prompt "The quick" --max-new 200 2>"$T/err" | head -c 1 >/dev/null
grep -q "cannot write" "$T/err" && bad "EPIPE was reported: $(cat "$T/err")" || ok "EPIPE is quiet"

# -- findings 6, 13: transcripts and prompts are checked before the first token
expect "transcript is a folder" 2 "--transcript $T: not a regular file" $BIN run --model "$FX/k3-tiny" --prompt hi --transcript "$T"
expect "transcript folder missing" 2 "its folder $T/nope does not exist" $BIN run --model "$FX/k3-tiny" --prompt hi --transcript "$T/nope/t.jsonl"
printf 'caf\351 \377\376 ok' > "$T/latin1.txt"
timeout 20 $BIN run --model "$FX/k3-tiny" --prompt - --transcript "$T/u.jsonl" --max-new 4 < "$T/latin1.txt" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 0 ] && python3 -c "import json,sys; m=[json.loads(l) for l in open(sys.argv[1])]; assert m[0]['content'].count('\ufffd')==3, m" "$T/u.jsonl" \
  && ok "invalid UTF-8 prompt stored with U+FFFD" || bad "invalid UTF-8 transcript: rc=$rc $(cat "$T/err")"
printf '{"role":"user","content":"hi"}\r\n\r\n{"role":"assistant","content":"yo"}\r\n' > "$T/crlf.jsonl"
expect "CRLF transcript" 0 "74 prefilled" $BIN run --model "$FX/k3-tiny" --prompt again --transcript "$T/crlf.jsonl" --max-new 2
printf 'ab\000cd' > "$T/nul.txt"
expect "NUL in a stdin prompt" 2 "holds a NUL byte at offset 2" sh -c "$BIN run --model '$FX/k3-tiny' --prompt - < '$T/nul.txt'"
expect "empty --prompt" 2 "the prompt is empty" $BIN run --model "$FX/k3-tiny" --prompt ""
printf '{"task":"t","prompt":"p","reference":"r"}\n{"task":"t","prompt":"p","reference":""}\n' > "$T/ev.jsonl"
expect "eval empty reference" 2 "$T/ev.jsonl:2: \"reference\" is empty" $BIN eval --model "$FX/k3-tiny" --data "$T/ev.jsonl"

# -- finding 14: config and checkpoint cross-checked at open
for key in num_shared_experts attn_res_block_size; do
  d=nokey-$key; model "$d" k3-tiny; rm "$T/$d/config.json"
  python3 -c "import json,sys; c=json.load(open(sys.argv[1])); del c['text_config'][sys.argv[3]]; json.dump(c, open(sys.argv[2],'w'))" \
    "$FX/k3-tiny/config.json" "$T/$d/config.json" "$key"
  expect "config without $key" 2 "is in the checkpoint but config.json does not use it" $BIN run --model "$T/$d" --prompt hi --max-new 2
done
d=nobias; model "$d" k3-tiny
python3 - "$FX/k3-tiny" "$T/$d" <<'PY'
import json, os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
name = "language_model.model.layers.1.block_sparse_moe.gate.e_score_correction_bias"
new = name[:-1] + "z"           # same length: the header keeps its size
ix = json.load(open(os.path.join(src, "model.safetensors.index.json")))
shard = ix["weight_map"].pop(name); ix["weight_map"][new] = shard
os.remove(os.path.join(dst, "model.safetensors.index.json")); json.dump(ix, open(os.path.join(dst, "model.safetensors.index.json"), "w"))
data = open(os.path.join(src, shard), "rb").read()
os.remove(os.path.join(dst, shard)); open(os.path.join(dst, shard), "wb").write(data.replace(name.encode(), new.encode(), 1))
PY
expect "noaux_tc without its bias" 2 "e_score_correction_bias' is missing; config.json's topk_method \"noaux_tc\"" $BIN run --model "$T/$d" --prompt hi
d=bigtok; model "$d" k3-tiny; rm "$T/$d/tokenizer_config.json" "$T/$d/tiktoken.model"
python3 - "$FX/k3-tiny" "$T/$d" <<'PY'
import base64, json, os, sys
src, dst = sys.argv[1], sys.argv[2]
lines = open(os.path.join(src, "tiktoken.model")).read().split()
n = len(lines) // 2            # one more rank: the tokenizer's vocabulary is one past the model's
open(os.path.join(dst, "tiktoken.model"), "w").write(open(os.path.join(src, "tiktoken.model")).read().rstrip("\n") +
    "\n%s %d\n" % (base64.b64encode(b"\x00remora\x01").decode(), n))
c = json.load(open(os.path.join(src, "tokenizer_config.json")))
c["added_tokens_decoder"] = {str(int(k) + 1): v for k, v in c["added_tokens_decoder"].items()}
json.dump(c, open(os.path.join(dst, "tokenizer_config.json"), "w"))
PY
expect "tokenizer ids past the model's vocabulary" 2 "but the model's vocab_size is 3072" $BIN run --model "$T/$d" --prompt hi

# -- finding 17: one documented cap per file
d=bigcfg; model "$d" k3-tiny; rm "$T/$d/config.json"
python3 -c "import sys; t=open(sys.argv[1]).read().rstrip(); open(sys.argv[2],'w').write(t + ' ' * (20 * 10**6))" "$FX/k3-tiny/config.json" "$T/$d/config.json"
expect "20 MB config.json" 2 "config.json: larger than 16777216 bytes, the cap of this file" $BIN run --model "$T/$d" --prompt hi

# -- finding 19: tokenize --chat refuses malformed conversations
while IFS='|' read -r conv want; do
  printf '%s' "$conv" > "$T/conv.json"
  expect "tokenize --chat $want" 2 "$want" sh -c "$BIN tokenize --tokenizer '$FX/k3-tiny' --chat < '$T/conv.json'"
done <<'TABLE'
{"messages":[{"role":7,"content":"x"}]}|messages[0]: "role" must be a string
{"messages":[{"role":"user","content":"a"},{"role":"user"}]}|messages[1]: "content" is missing
{"messages":[{"role":"user","content":"a"}],"tools":"nope"}|"tools" must be a list
{"messages":[{"role":"wizard","content":"a"}]}|messages[0]: "role" "wizard" is not system, user, assistant or tool
TABLE

# -- findings 7, 18: a full disk fails the trace and `logits --out` cleanly
MNT=$T/mnt; mkdir -p "$MNT"
if ! mount -t tmpfs -o size=16k tmpfs "$MNT" 2>/dev/null; then
  truncate -s 8M "$T/disk.img" && mkfs.ext4 -q "$T/disk.img" 2>/dev/null && mount -o loop "$T/disk.img" "$MNT" 2>/dev/null &&
    python3 -c "open('$MNT/filler','wb').write(b'x' * 1)" && fallocate -l $(( $(stat -f -c '%a*%S' "$MNT") - 16384 )) "$MNT/filler2" 2>/dev/null || MNT=
fi
if [ -z "$MNT" ] || ! mountpoint -q "$MNT"; then
  echo "skip full-disk cases: neither a tmpfs nor a loop-mounted image can be mounted here"; MNT=
else
  expect "trace on a full disk" 1 "cannot write the trace: No space left on device" \
    $BIN run --model "$FX/k3-tiny" --prompt "The quick brown fox" --max-new 300 --trace "$MNT/tr.jsonl"
  python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1])]" "$MNT/tr.jsonl" && ok "the trace ends at a whole line" || bad "partial trace line"
  rm -f "$MNT/tr.jsonl"
  echo "old" > "$MNT/l.f32"
  python3 -c "print(' '.join(['1'] * 64))" > "$T/ids"
  expect "logits --out on a full disk" 1 "$MNT/l.f32: cannot write" $BIN logits --model "$FX/k3-tiny" --ids-file "$T/ids" --out "$MNT/l.f32"
  [ "$(cat "$MNT/l.f32")" = old ] && [ -z "$(ls "$MNT" | grep tmp)" ] && ok "logits: the old file is untouched, no temporary left" || bad "logits left $(ls "$MNT")"
fi
exit $fail
