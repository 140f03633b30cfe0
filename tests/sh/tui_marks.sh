#!/bin/sh
# Screen test: a reply that does not end as a complete answer leaves a mark
# in the answer pane: cut by --max-new inside its reasoning,
# "[no answer: stopped while reasoning] [stopped at 20 tokens]"; cut in its
# answer, "[stopped at 20 tokens]".
. "$(dirname "$0")/tui_common.inc"
[ $SYNTHETIC = 1 ] || { echo "skipped: needs the synthetic source's lengths"; exit 0; }
start 120 40
run chat --synthetic --synthetic-rate 1000 --max-new 20
ready || fail "chat did not start"
send "cut me short" 1
ready 100 || fail "turn did not end"
column 1 | grep -A1 '\[no answer: stopped while reasoning\]' | grep -q '\[stopped at 20 tokens\]' ||
  fail "no mark for a reply cut while reasoning"
t send-keys -l "/think off"; t send-keys Enter
send "and again" 2
ready 100 || fail "second turn did not end"
column 1 | grep -q 'Received 1 message' || fail "the second reply has no answer"
# the first turn's second mark, and this one's
[ "$(column 1 | grep -c '^\[stopped at 20 tokens\]')" = 2 ] || fail "no mark for a reply cut in its answer"
quit
echo ok
