#!/bin/sh
# Screen test: /copy puts the last answer on the clipboard through OSC 52
# (issue #20): tmux, with set-clipboard on, takes the escape into its paste
# buffer, which must hold the answer exactly as the hint counts it; /find
# TEXT shows the transcript's last match, reversed, then the one before,
# and says which of how many; a text that is nowhere is said so.
. "$(dirname "$0")/tui_common.inc"
start 120 40
t set-option -g set-clipboard on
run chat --synthetic --synthetic-rate 1000
ready || fail "chat did not start"
t send-keys -l "/copy"; t send-keys Enter
wait_for 'no answer to copy yet' 30 || fail "/copy before any answer did not say so"
send "first question" 1
ready 300 || fail "turn 1 did not end"
send "say more" 2
ready 300 || fail "turn 2 did not end"
t send-keys -l "/copy"; t send-keys Enter
wait_for 'copied the last answer \([0-9]+ bytes\)' 30 || fail "/copy gave no hint"
bytes=$(screen | sed -n 's/.*copied the last answer (\([0-9]*\) bytes).*/\1/p')
n=30
while [ $n -gt 0 ] && ! t show-buffer > "$SCRATCH/clip" 2>/dev/null; do sleep 0.1; n=$((n - 1)); done
[ -s "$SCRATCH/clip" ] || fail "tmux got no clipboard text"
head -c 40 "$SCRATCH/clip" | grep -q '^Received 1 message: 8 bytes, 1 lines' ||
  fail "the clipboard is not the last answer: $(head -c 80 "$SCRATCH/clip")"
[ "$(wc -c < "$SCRATCH/clip")" = "$bytes" ] || fail "clipboard $(wc -c < "$SCRATCH/clip") bytes, answer $bytes"
# /find: the last match first, then the one before (both turns say "Received 1 message")
t send-keys -l "/find received 1 message"; t send-keys Enter
wait_for '/find: match 1 of 2' 30 || fail "/find did not find the last match"
t capture-pane -p -e | grep -F "$(printf '\033[7m')" | grep -q 'R' || fail "the match is not reversed"
t send-keys -l "/find received 1 message"; t send-keys Enter
wait_for '/find: match 2 of 2' 30 || fail "/find again did not go to the one before"
column 1 | grep -q 'first question' || fail "the pane did not scroll to the first turn"
t send-keys -l "/find zebra-unicorn"; t send-keys Enter
wait_for '"zebra-unicorn" is not in the transcript' 30 || fail "a missing text was not said so"
quit
echo ok
