#!/bin/sh
# Screen test: the input history. Each line is in the history file as soon
# as it is entered, so a chat killed with SIGKILL loses nothing; two chats at
# once (sharing $XDG_STATE_HOME) keep each other's lines; the next chat
# recalls both with Up.
. "$(dirname "$0")/tui_common.inc"
H="$XDG_STATE_HOME/remora/history"
until_in() { # SESSIONFN REGEX
  n=100; while [ $n -gt 0 ]; do $1 | grep -qE -- "$2" && return 0; sleep 0.1; n=$((n - 1)); done; return 1
}
# two sessions, named so that targets cannot be taken for window numbers
t new-session -d -s A -x 120 -y 40 "env PS1='$ ' HOME=$SCRATCH sh" || exit 1
t set-option -g status off >/dev/null
t new-session -d -s B -x 120 -y 40 "env PS1='$ ' HOME=$SCRATCH sh" || fail "no second session"
sa() { t capture-pane -p -t =A:; }
sb() { t capture-pane -p -t =B:; }
screen() { sa; echo "---- chat B ----"; sb; }
until_in sa '^\$' || fail "no shell prompt in A"
until_in sb '^\$' || fail "no shell prompt in B"
t send-keys -t =A: -l "$BIN chat $SOURCE --synthetic-rate 1000"; t send-keys -t =A: Enter
t send-keys -t =B: -l "$BIN chat $SOURCE --synthetic-rate 1000"; t send-keys -t =B: Enter
until_in sa '^ ready( |$)' || fail "chat A did not start"
until_in sb '^ ready( |$)' || fail "chat B did not start"
t send-keys -t =A: -l "alpha from the first chat"; t send-keys -t =A: Enter
until_in sa 'turn 1' || fail "chat A did not take the line"
n=30; until grep -q 'alpha from the first chat' "$H" 2>/dev/null; do
  n=$((n - 1)); [ $n -gt 0 ] || fail "the line is not in the history file while the chat runs"; sleep 0.1
done
t send-keys -t =B: -l "beta from the second chat"; t send-keys -t =B: Enter
until_in sb 'turn 1' || fail "chat B did not take the line"
# SIGKILL chat A: its line stays
a_pid=$(pgrep -P "$(t display-message -p -t =A: '#{pane_pid}')")
[ -n "$a_pid" ] || fail "no chat A under its shell"
kill -KILL "$a_pid"
t send-keys -t =A: Enter      # the shell's prompt again (the tty may be raw: Enter still ends the line)
# chat B quits normally (Ctrl-D once: its turn is autosaved)
until_in sb '^ ready( |$)' || fail "chat B did not finish its turn"
t send-keys -t =B: C-d
n=50; until sb | grep -v '^$' | tail -n 1 | grep -qE '^\$ ?$'; do
  n=$((n - 1)); [ $n -gt 0 ] || fail "chat B did not exit"; sleep 0.1
done
grep -q 'alpha from the first chat' "$H" || fail "chat B's exit dropped chat A's line"
grep -q 'beta from the second chat' "$H" || fail "chat B's line is not kept"
# a new chat recalls both
t send-keys -t =B: -l "clear; $BIN chat $SOURCE --synthetic-rate 1000"; t send-keys -t =B: Enter
until_in sb '^ ready( |$)' || fail "chat C did not start"
t send-keys -t =B: Up
until_in sb '^> beta from the second chat' || fail "Up did not recall the last line"
t send-keys -t =B: Up
until_in sb '^> alpha from the first chat' || fail "Up did not recall the killed chat's line"
t send-keys -t =B: C-e C-u; t send-keys -t =B: -l "/quit"; t send-keys -t =B: Enter
n=50; until sb | grep -v '^$' | tail -n 1 | grep -qE '^\$ ?$'; do
  n=$((n - 1)); [ $n -gt 0 ] || fail "chat C did not exit"; sleep 0.1
done
echo ok
