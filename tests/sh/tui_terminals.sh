#!/bin/sh
# Screen test: terminals. TERM=dumb (no cursor addressing) is refused with a
# message pointing to `remora run`, exit status 2, instead of a one-line
# jumble. On the Linux console F1..F5 send "ESC [ [ A".."ESC [ [ E" (its
# terminfo kf1..kf5): F1 shows the help and F3 hides the panels, instead of
# typing "A" and "C" into the line. The Linux console has no alternate
# screen, so the chat clears its frame when it quits: the shell comes back
# on an empty screen, not over the last frame's input line.
. "$(dirname "$0")/tui_common.inc"
start 120 40
t send-keys -l "TERM=dumb $BIN chat $SOURCE; echo rc=\$?"; t send-keys Enter
wait_for '^rc=2' 50 || fail "TERM=dumb did not exit 2"
screen | grep -q 'cannot move its cursor (TERM=dumb)' || fail "no message about the terminal"
screen | grep -q 'remora run' || fail "the message does not point to remora run"
t send-keys -l "clear; TERM=linux $BIN chat $SOURCE --synthetic-rate 1000"; t send-keys Enter
ready || fail "chat did not start with TERM=linux"
t send-keys -l "$(printf '\033[[A')"
wait_for '^ *Ctrl-C +stop generating' 30 || fail "F1 (ESC [ [ A) did not show the help"
t send-keys -l "$(printf '\033[[A')"
wait_gone 'F1/Esc closes' 30 || fail "F1 (ESC [ [ A) did not close the help"
screen | grep -q '^> *A' && fail "F1 typed A into the line"
column 3 | grep -q 'Timing' || fail "no panels to hide"
t send-keys -l "$(printf '\033[[C')"
wait_gone 'Timing' 30 || fail "F3 (ESC [ [ C) did not hide the panels"
screen | grep -qE '^> *A?C' && fail "F3 typed C into the line"
quit
screen | grep -q 'Enter sends' && fail "the frame stays on the Linux console after quitting"
echo ok
