#!/bin/sh
# Hostile files in place of the ones remora writes and reads:
#   - `logits --out` / `--routes` at a device node or a FIFO write into it,
#     never replace it with a regular file (a node this test makes, as root,
#     with /dev/full's numbers: ENOSPC is an error, exit 1); a FIFO without
#     a reader is refused at once;
#   - a transcript `run` writes is new 0600, and one the user made 0640
#     keeps that mode at the next save;
#   - a FIFO in place of the snapshot (F.state) or of a prefix-cache entry
#     is refused as "not a regular file" within seconds, never waited on,
#     and the answer is the one a fresh run gives (the snapshot is then not
#     written over the FIFO either: exit 1, said so);
#   - the prefix folder behind a symbolic link: the linked folder's mode is
#     left as the user set it.
# Every command runs under `timeout`, so a hang fails the test instead of
# holding it.
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=${REMORA_BIN:-build/rel/remora}
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
M=assets/model
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" REMORA_PREFIX_CACHE_GB=0
status=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; status=1; }
printf '1 2 3\n' > "$T/ids"
logits() { timeout 30 "$BIN" logits --model "$FX/kl-tiny" --ids-file "$T/ids" "$@" > "$T/out" 2> "$T/err"; }

# ---- atomic writes over what is not a regular file ------------------------
logits --out /dev/null --routes /dev/null
rc=$?
[ $rc = 0 ] && [ -c /dev/null ] && ok "--out /dev/null: written in place, still a device" || bad "/dev/null: exit $rc: $(cat "$T/err")"
if mknod "$T/full" c 1 7 2>/dev/null; then
  logits --out "$T/full"
  rc=$?
  [ $rc = 1 ] && [ -c "$T/full" ] && grep -q "$T/full: cannot write: No space left on device" "$T/err" &&
    ok "--out on a /dev/full node: exit 1, ENOSPC named, the node left a device" ||
    bad "/dev/full node: exit $rc, $(stat -c %F "$T/full"): $(cat "$T/err")"
  logits --out "$T/l.f32" --routes "$T/full"
  rc=$?
  [ $rc = 1 ] && [ -c "$T/full" ] && ok "--routes on a /dev/full node: exit 1, the node left a device" ||
    bad "--routes /dev/full node: exit $rc, $(stat -c %F "$T/full")"
else
  echo "skip the /dev/full node (mknod needs root)"
fi
mkfifo "$T/fifo"
(timeout 30 cat "$T/fifo" > "$T/fromfifo") &
reader=$!
sleep 0.3
logits --out "$T/fifo"
rc=$?
wait $reader
[ $rc = 0 ] && [ -p "$T/fifo" ] && [ "$(stat -c %s "$T/fromfifo")" = $((3 * 3072 * 4)) ] &&
  ok "--out on a FIFO: the logits go through it, the FIFO stays" || bad "FIFO with a reader: exit $rc, $(stat -c %F "$T/fifo")"
logits --out "$T/fifo"
rc=$?
[ $rc = 1 ] && [ -p "$T/fifo" ] && grep -q "$T/fifo: cannot write: a FIFO with no reader" "$T/err" &&
  ok "--out on a FIFO with no reader: refused at once" || bad "FIFO without a reader: exit $rc: $(cat "$T/err")"

# ---- transcript modes -----------------------------------------------------
run() { timeout 60 "$BIN" run --model "$M" --max-new 4 "$@" > "$T/out" 2> "$T/err"; }
run --transcript "$T/c.jsonl" --prompt "Hi" || bad "run: $(cat "$T/err")"
[ "$(stat -c %a "$T/c.jsonl")" = 600 ] && [ "$(stat -c %a "$T/c.state")" = 600 ] &&
  ok "a new transcript and its snapshot are 0600" || bad "modes: $(stat -c '%n %a' "$T/c.jsonl" "$T/c.state")"
chmod 0640 "$T/c.jsonl"
run --transcript "$T/c.jsonl" --prompt "Again" || bad "run 2: $(cat "$T/err")"
[ "$(stat -c %a "$T/c.jsonl")" = 640 ] && ok "a transcript the user made 0640 keeps its mode" ||
  bad "mode after the save: $(stat -c %a "$T/c.jsonl")"

# ---- FIFOs in place of files that are read --------------------------------
run --transcript "$T/g.jsonl" --prompt "What is 2 plus 2?" || bad "run g: $(cat "$T/err")"
run --transcript "$T/g.jsonl" --prompt "And 3 plus 3?" && cp "$T/out" "$T/fresh" || bad "run g 2: $(cat "$T/err")"
run --transcript "$T/f.jsonl" --prompt "What is 2 plus 2?" || bad "run f: $(cat "$T/err")"
rm "$T/f.state"
mkfifo "$T/f.state"
run --transcript "$T/f.jsonl" --prompt "And 3 plus 3?"
rc=$?
[ $rc = 1 ] && grep -q "$T/f.state: not a regular file (a FIFO); the conversation is computed again" "$T/err" &&
  grep -q "$T/f.state: not a regular file: it is not replaced (the conversation itself was saved" "$T/err" &&
  [ -p "$T/f.state" ] && cmp -s "$T/out" "$T/fresh" &&
  ok "a FIFO as the snapshot: not read, not replaced, exit 1, the answer computed" ||
  bad "FIFO snapshot: exit $rc: $(cat "$T/err")"
export REMORA_PREFIX_CACHE_GB=1
q="Here is a list to remember: apple, river, candle, mountain, pencil, window, garden, violin. How many items?"
run --chat --prompt "$q" && cp "$T/out" "$T/p1" || bad "prefix run 1: $(cat "$T/err")"
d="$T/cache/remora/prefix"
n=0
for e in "$d"/*.snap; do rm -f "$e"; mkfifo "$e"; n=$((n + 1)); done
run --chat --prompt "$q"
rc=$?
[ $n -gt 0 ] && [ $rc = 0 ] && grep -q " 0 restored, " "$T/err" && cmp -s "$T/out" "$T/p1" &&
  ok "FIFOs as $n prefix-cache entries: refused, the prompt computed" || bad "FIFO entries ($n): exit $rc: $(cat "$T/err")"
[ "$(stat -c %a "$d")" = 700 ] && ok "the prefix folder is 0700" || bad "prefix folder mode $(stat -c %a "$d")"

# ---- the prefix folder behind a link --------------------------------------
mkdir -p "$T/real" "$T/c2/remora"
chmod 0755 "$T/real"
ln -s "$T/real" "$T/c2/remora/prefix"
XDG_CACHE_HOME="$T/c2" run --chat --prompt "$q" || bad "run with a linked folder: $(cat "$T/err")"
ls "$T/real" | grep -q '\.snap$' && [ "$(stat -c %a "$T/real")" = 755 ] &&
  ok "the prefix folder behind a link: entries written, the linked folder's mode left 0755" ||
  bad "linked folder: mode $(stat -c %a "$T/real"), $(ls "$T/real")"
exit $status
