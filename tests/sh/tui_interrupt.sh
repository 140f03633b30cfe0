#!/bin/sh
# Screen test: Ctrl-C mid-answer stops at the next token, keeps the partial
# answer marked [interrupted], and the next prompt works; Ctrl-C at an empty
# prompt says how to quit.
. "$(dirname "$0")/tui_common.inc"
start 120 40
run chat $SOURCE --no-think --synthetic-rate 8
ready || fail "chat did not start"
send "first question" 1
if [ $SYNTHETIC = 1 ]; then wait_for 'Received 1 message' 100 || fail "answer did not start"
else wait_for 'generating' 100 || fail "answer did not start"; fi
t send-keys C-c
wait_for '\[interrupted\]' 30 || fail "no interrupted mark"
ready 10 || fail "not ready after Ctrl-C"
before=$(column 1)
sleep 0.5
[ "$(column 1)" = "$before" ] || fail "text still arriving after the stop"
t send-keys C-c
wait_for 'Ctrl-D or /quit exits' 30 || fail "no quit hint at the empty prompt"
send "second" 2
if [ $SYNTHETIC = 1 ]; then
  wait_for 'Received 1 message: 6 bytes' 100 || fail "second prompt did not answer"
else
  wait_for 'generating' 100 || fail "second prompt did not start"
fi
column 1 | grep -q "first question" || fail "first turn gone from the transcript"
t send-keys C-c
ready 30 || fail "second stop failed"
quit
echo ok
