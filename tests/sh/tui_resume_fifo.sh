#!/bin/sh
# Screen test: `chat --resume FILE` whose snapshot (FILE's .state) is a FIFO
# is ready within seconds, says the snapshot is not a regular file, and
# shows the conversation (computed again at the next message), instead of
# staying "working…" on an open that never returns.
. "$(dirname "$0")/tui_common.inc"
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
REMORA_PREFIX_CACHE_GB=0 timeout 60 "$BIN" run --model "$FX/k3-tiny" --transcript "$SCRATCH/c.jsonl" \
  --prompt "remember the walrus" --max-new 3 > /dev/null 2>&1 || fail "run --transcript failed"
rm "$SCRATCH/c.state"
mkfifo "$SCRATCH/c.state"
start 160 40
run chat --model "$FX/k3-tiny" --resume "$SCRATCH/c.jsonl"
ready 100 || fail "not ready within 10 s with a FIFO as the snapshot"
# the note wraps: the answer pane's lines joined
note() { column 1 | sed 's/ *$//' | tr '\n' ' ' | grep -q 'c.state: not a regular file (a FIFO)'; }
i=0; while ! note && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
note || fail "no note about the FIFO"
screen | grep -q 'remember the walrus' || fail "the conversation is not shown"
[ -p "$SCRATCH/c.state" ] || fail "the FIFO was replaced"
quit
echo ok
