#!/bin/sh
# `remora run --transcript F` keeps the conversation's state in the snapshot
# beside F (c.jsonl: c.state) and continues from it: the second run
# restores what the first consumed and computes only the new part, with the
# answer of a run that computes it all; a damaged snapshot is refused with
# the file and the reason and the conversation computed again; on a full
# disk (a 6 MB tmpfs this test mounts) the transcript is saved, the message
# says the snapshot was not, the old snapshot is left whole and the next
# run, with room again, goes on from it; and the prefix cache restores a
# repeated prompt whole.
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=${REMORA_BIN:-build/rel/remora}
M=assets/model
T=$(mktemp -d)
cleanup() { mountpoint -q "$T/full" 2>/dev/null && umount "$T/full"; rm -rf "$T"; }
trap cleanup EXIT
export XDG_CACHE_HOME="$T/cache" REMORA_PREFIX_CACHE_GB=0
status=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; status=1; }
run() { # run TRANSCRIPT PROMPT: the answer on $T/out, stderr on $T/err; returns the exit status
  "$BIN" run --model "$M" --transcript "$1" --prompt "$2" --max-new 40 > "$T/out" 2> "$T/err"
}
restored() { sed -n 's/.* \([0-9]*\) restored,.*/\1/p' "$T/err" | tail -1; }

# the second run restores the first one's state and answers as a full prefill does
run "$T/c.jsonl" "What is 12 plus 30?" || bad "first run: $(cat "$T/err")"
[ -s "$T/c.state" ] && ok "the snapshot is beside the transcript" || bad "no $T/c.state"
[ "$(restored)" = 0 ] || bad "the first run restored $(restored) tokens"
cp "$T/c.jsonl" "$T/ref.jsonl"
run "$T/c.jsonl" "And what is that times 2?" || bad "second run: $(cat "$T/err")"
n=$(restored); cp "$T/out" "$T/a2"
grep -q "^remora run: $n tokens of state restored from the snapshot ([0-9.]* MB) in [0-9.]* s$" "$T/err" &&
  ok "the restore is said with its size and time" || bad "no restore note: $(cat "$T/err")"
run "$T/ref.jsonl" "And what is that times 2?" || bad "reference run: $(cat "$T/err")"
[ "${n:-0}" -gt 0 ] && [ "$(restored)" = 0 ] && cmp -s "$T/a2" "$T/out" &&
  ok "continued from $n restored tokens, the answer of a full prefill" ||
  bad "restored ${n:-?} tokens; answers: '$(cat "$T/a2")' vs '$(cat "$T/out")'"

# a damaged snapshot: refused with the file and the reason, computed again
cp "$T/ref.jsonl" "$T/d.jsonl"
head -c 1000 "$T/c.state" > "$T/d.state"
run "$T/d.jsonl" "And what is that times 2?" || bad "run with a damaged snapshot: $(cat "$T/err")"
grep -q "remora run: $T/d.state: truncated.*the conversation is computed again" "$T/err" && [ "$(restored)" = 0 ] &&
  cmp -s "$T/a2" "$T/out" && ok "a truncated snapshot is refused and the answer is the same" ||
  bad "damaged snapshot: $(cat "$T/err")"

# a full disk: the transcript is saved, the old snapshot stays whole and is used later
if mkdir "$T/full" && mount -t tmpfs -o size=6m remora-test-full "$T/full" 2>/dev/null; then
  F="$T/full/c.jsonl"
  run "$F" "What is 12 plus 30?" || bad "run on the tmpfs: $(cat "$T/err")"
  sum=$(cksum < "$T/full/c.state")
  avail=$(df -k --output=avail "$T/full" | tail -1)
  dd if=/dev/zero of="$T/full/filler" bs=1k count=$((avail - 64)) 2>/dev/null
  run "$F" "And what is that times 2?"
  rc=$?
  [ $rc = 1 ] && grep -q "$T/full/c.state: cannot write: No space left on device (the conversation itself was saved to $F)" "$T/err" &&
    ok "disk full: exit 1, the snapshot not written and said so" || bad "disk full: exit $rc: $(cat "$T/err")"
  grep -q "times 2" "$F" && ok "disk full: the transcript was saved" || bad "disk full: the transcript lost the turn"
  [ "$(cksum < "$T/full/c.state")" = "$sum" ] && ! ls "$T/full" | grep -q tmp &&
    ok "disk full: the old snapshot is whole, no temporary file left" || bad "disk full: the snapshot changed"
  rm -f "$T/full/filler"
  cp "$F" "$T/ref2.jsonl"
  run "$F" "Count the letters in hello." || bad "run after the disk full: $(cat "$T/err")"
  n=$(restored); cp "$T/out" "$T/a3"
  run "$T/ref2.jsonl" "Count the letters in hello." || bad "reference run 2: $(cat "$T/err")"
  [ "${n:-0}" -gt 0 ] && cmp -s "$T/a3" "$T/out" && ok "the old snapshot goes on: $n tokens restored, the same answer" ||
    bad "after the disk full: restored ${n:-?}; '$(cat "$T/a3")' vs '$(cat "$T/out")'"
  umount "$T/full"
else
  bad "cannot mount a tmpfs for the disk-full case (needs root)"
fi

# the prefix cache: the same prompt again is restored whole
export REMORA_PREFIX_CACHE_GB=1
q="Here is a list to remember: apple, river, candle, mountain, pencil, window, garden, violin. How many items are in the list?"
"$BIN" run --model "$M" --chat --prompt "$q" --max-new 30 > "$T/p1" 2> "$T/err" || bad "prefix run 1: $(cat "$T/err")"
"$BIN" run --model "$M" --chat --prompt "$q" --max-new 30 > "$T/p2" 2> "$T/err" || bad "prefix run 2: $(cat "$T/err")"
grep -q "ctx \([0-9]*\), 0 reused, \1 restored, 0 prefilled" "$T/err" && cmp -s "$T/p1" "$T/p2" &&
  ok "a repeated prompt is restored whole from the prefix cache" || bad "prefix cache: $(cat "$T/err")"
"$BIN" run --model "$M" --chat --prompt "$q" --max-new 30 --prefix-cache 0 > "$T/p3" 2> "$T/err"
grep -q " 0 restored, " "$T/err" && ok "--prefix-cache 0 turns it off" || bad "--prefix-cache 0: $(cat "$T/err")"
exit $status
