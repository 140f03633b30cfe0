#!/bin/sh
# Screen test: resizing between 80x24 and 200x60 (and below the minimum)
# while an answer streams keeps a valid layout every time; below the
# minimum the screen says so in words that fit it.
. "$(dirname "$0")/tui_common.inc"
start 80 24
run chat $SOURCE --synthetic-rate 60
ready || fail "chat did not start"
send "resize me" 1
valid() { # COLS ROWS
  wait_for "$STATUS_RE" 50 || return 1
  s=$(screen)
  [ "$(printf '%s\n' "$s" | wc -l)" -eq "$2" ] || return 1
  printf '%s\n' "$s" | grep -q "Answer" || return 1
  printf '%s\n' "$s" | grep -qE '^>( |$)' || return 1
  # no row wider than the terminal
  [ "$(printf '%s\n' "$s" | wc -L)" -le "$1" ] || return 1
  aligned >/dev/null || return 1
}
for size in 200x60 80x24 120x40 100x30 60x20 45x11 200x60 80x24; do
  c=${size%x*}; r=${size#*x}
  t resize-window -x "$c" -y "$r"
  n=30
  until valid "$c" "$r"; do
    n=$((n - 1)); [ $n -gt 0 ] || fail "invalid layout at $size"; sleep 0.1
  done
done
t resize-window -x 30 -y 8
wait_for 'terminal too small' 30 || fail "no too-small state at 30x8"
# the message fits the screen it is on: one phrase a row at 20 columns
t resize-window -x 20 -y 8
wait_for '^have 20x8 *$' 30 || fail "the too-small message does not say the size in 20 columns"
screen | grep -q '^need 40x10 *$' || fail "the too-small message does not fit 20 columns"
screen | grep -q '^terminal too small *$' || fail "the too-small message was cut"
t resize-window -x 120 -y 40
wait_for "$STATUS_RE" 30 || fail "did not recover from too small"
valid 120 40 || fail "invalid layout after recovering"
t send-keys C-c; ready 50 || fail "stop failed"
quit
echo ok
