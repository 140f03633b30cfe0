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
column 2 | grep -qE "^turn 2( |$)" && fail "the paste became more than one message"
# the fold counts the message's lines (not wrapped rows) and its own bytes
# (not the "› " before it): 1280 lines, the first 5 and part of the 6th shown
screen | grep -qE '… 1274 more lines \(102400 bytes in all' || fail "long message not shown folded"
t send-keys M-o
wait_for 'long messages shown whole' 30 || fail "Alt-O did not open the fold"
t send-keys M-Home
wait_for 'Answer  \[' 30 || fail "Alt-Home did not scroll"
screen | grep -q 'more lines' && fail "the fold is still there"
screen | grep -q 'line 0010 of the big paste' || fail "the unfolded message is not shown"
t send-keys M-o
wait_for '… 1274 more lines' 30 || fail "Alt-O did not fold again"
quit
echo ok
