#!/bin/sh
# Screen test: the slash commands. /save writes the conversation, /clear
# empties it, /load brings it back; /think, /system, /stats, /help and an
# unknown command answer in the transcript or the hint row; Alt-Enter makes a
# multi-line message.
. "$(dirname "$0")/tui_common.inc"
start 120 40
run chat $SOURCE --synthetic-rate 1000 --system "'be brief'"
ready || fail "chat did not start"
send "alpha" 1
ready 300 || fail "turn did not end"
t send-keys -l "/stats"; t send-keys Enter
wait_for 'last turn: [0-9]+ tokens' 30 || fail "/stats gave no summary"
t send-keys -l "/save $SCRATCH/conv.jsonl"; t send-keys Enter
wait_for 'conversation saved' 50 || fail "/save did not report"
grep -q '"role":"user","content":"alpha"' "$SCRATCH/conv.jsonl" || fail "saved file lacks the message"
grep -q '"role":"system","content":"be brief"' "$SCRATCH/conv.jsonl" || fail "saved file lacks the system prompt"
t send-keys -l "/clear"; t send-keys Enter
wait_for 'conversation cleared' 50 || fail "/clear did not report"
screen | grep -q 'alpha' && fail "/clear left the transcript"
t send-keys -l "/load $SCRATCH/conv.jsonl"; t send-keys Enter
wait_for 'conversation loaded: 1 turns' 50 || fail "/load did not report"
screen | grep -q '› alpha' || fail "/load did not restore the transcript"
t send-keys -l "/load $SCRATCH/missing.jsonl"; t send-keys Enter
wait_for 'missing.jsonl:' 50 || fail "/load of a missing file gave no error"
t send-keys -l "/think off"; t send-keys Enter
wait_for 'think off' 30 || fail "/think off not shown"
t send-keys -l "/system"; t send-keys Enter
wait_for 'system prompt: be brief' 30 || fail "/system did not show the prompt"
t send-keys -l "/frobnicate"; t send-keys Enter
wait_for 'unknown command /frobnicate: /help lists the commands; //frobnicate sends it' 30 ||
  fail "unknown command not reported with the // escape"
wait_for '^> /frobnicate' 10 || fail "the unknown command was not kept in the input line"
t send-keys C-e C-u
t send-keys -l "/help"; t send-keys Enter
wait_for '^ *Ctrl-C +stop generating' 30 || fail "/help did not list the keys"
screen | grep -q 'Help .* F1/Esc closes' || fail "/help is not the help page"
# a two-line message with thinking off: no reasoning, one message
t send-keys -l "line one"; t send-keys M-Enter; t send-keys -l "line two"; t send-keys Enter
if [ $SYNTHETIC = 1 ]; then
  wait_for 'Received 1 message: 17 bytes, 2 lines' 100 || fail "multi-line message not sent whole"
fi
ready 300 || fail "turn did not end"
t send-keys -l "/quit"; t send-keys Enter
at_prompt 100 || fail "/quit did not exit"
echo ok
