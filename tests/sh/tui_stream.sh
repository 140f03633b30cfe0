#!/bin/sh
# Screen test: a prompt streams its answer into the answer pane and its
# reasoning into the reasoning pane, side by side, with the prompt above.
. "$(dirname "$0")/tui_common.inc"
start 120 40
run chat $SOURCE --synthetic-rate 400
ready || fail "chat did not start"
send "hello world" 1
ready 300 || fail "the turn did not end"
column 1 | grep -q "hello world" || fail "prompt not in the answer pane"
if [ $SYNTHETIC = 1 ]; then
  column 2 | grep -q "turn 1" || fail "no reasoning header in the reasoning pane"
  column 1 | grep -q "turn 1" && fail "reasoning header leaked into the answer pane"
  column 1 | grep -q "Received 1 message: 11 bytes, 1 lines" || fail "answer text missing"
  column 2 | grep -q "Received" && fail "answer text in the reasoning pane"
  [ "$(column 2 | tr -cd 'a-z' | wc -c)" -gt 100 ] || fail "too little reasoning text"
else
  # a random fixture model may never leave the reasoning channel
  [ "$(column 2 | sed '1d' | tr -cd '[:alnum:]' | wc -c)" -gt 0 ] ||
    [ "$(column 1 | sed '1,2d' | tr -cd '[:alnum:]' | wc -c)" -gt 0 ] || fail "no text streamed"
fi
t send-keys -l "/quit"; t send-keys Enter
at_prompt 100 || fail "did not exit"
echo ok
