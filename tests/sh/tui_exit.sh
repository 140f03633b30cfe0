#!/bin/sh
# Screen test: the terminal is restored after Ctrl-D, after /quit and across
# Ctrl-Z / fg (alternate screen left, shell prompt and echo working); the
# input history persists in $XDG_STATE_HOME/remora/history.
. "$(dirname "$0")/tui_common.inc"
start 100 30
alt() { t display-message -p '#{alternate_on}'; }
run chat $SOURCE --synthetic-rate 1000
ready || fail "chat did not start"
[ "$(alt)" = 1 ] || fail "not on the alternate screen"
send "remember this line" 1
ready 200 || fail "turn did not end"
t send-keys C-z
at_prompt 100 || fail "Ctrl-Z did not suspend"
[ "$(alt)" = 0 ] || fail "alternate screen still on while suspended"
t send-keys -l "fg"; t send-keys Enter
wait_for "$STATUS_RE" 50 || fail "fg did not bring the chat back"
screen | grep -qE "turn 1|remember this line" || fail "transcript lost across suspend"
# the turn is autosaved (tui_autosave.sh): Ctrl-D quits at once and says where
t send-keys C-d
at_prompt 100 || fail "Ctrl-D did not exit"
screen | grep -q "remora chat: the conversation is saved in $XDG_STATE_HOME/remora/sessions/" ||
  fail "the quit did not say where the conversation is"
[ "$(alt)" = 0 ] || fail "alternate screen still on after exit"
t send-keys -l "echo restored-\$((40 + 2))"; t send-keys Enter
wait_for '^restored-42' 100 || fail "terminal not usable after exit"
grep -q "remember this line" "$XDG_STATE_HOME/remora/history" || fail "history not saved"
[ -f "$XDG_STATE_HOME/remora/chat.log" ] || fail "no log for engine messages"
# second run: history recall with Up, then /quit
t send-keys -l "clear"; t send-keys Enter
run chat $SOURCE --synthetic-rate 1000
ready || fail "chat did not start again"
t send-keys Up
wait_for '^> remember this line' 30 || fail "history not recalled"
t send-keys C-c
t send-keys -l "/quit"; t send-keys Enter
at_prompt 100 || fail "/quit did not exit"
[ "$(alt)" = 0 ] || fail "alternate screen still on after /quit"
echo ok
