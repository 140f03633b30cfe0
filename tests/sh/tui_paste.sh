#!/bin/sh
# Screen test: a 100 KB bracketed paste (1280 lines) arrives as one message.
. "$(dirname "$0")/tui_common.inc"
[ $SYNTHETIC = 1 ] || { echo "skipped: needs the synthetic source's byte count"; exit 0; }
start 120 40
run chat $SOURCE --synthetic-rate 1000
ready || fail "chat did not start"
i=0
while [ $i -lt 1280 ]; do
  printf 'line %04d of the big paste: the quick brown fox jumps over the lazy dog .......\n' $i
  i=$((i + 1))
done > "$SCRATCH/paste.txt"
[ "$(wc -c < "$SCRATCH/paste.txt")" -eq 102400 ] || fail "paste file is not 100 KB"
t load-buffer "$SCRATCH/paste.txt"
t paste-buffer -p
wait_for 'line 1279 of the big paste' 100 || fail "paste did not reach the input line"
t send-keys Enter
wait_for 'turn 1' 100 || fail "the paste was not sent"
wait_for "Received 1 message: 102400 bytes, 1281" 200 || fail "paste did not arrive as one message"
ready 300 || fail "turn did not end"
screen | grep -q "turn 2" && fail "the paste became more than one message"
screen | grep -qE 'more lines \(102404 bytes' || fail "long message not shown folded"
t send-keys C-d
at_prompt 100 || fail "did not exit"
echo ok
