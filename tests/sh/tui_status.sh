#!/bin/sh
# Screen test: the status line puts the state first, then the model's name,
# the context meter (tokens in the context; reused and prefilled for this
# turn's prompt), the RAM budget and think, with markers for a hidden
# reasoning pane or hidden panels; at narrow widths the least useful go
# first and the state stays whole (issue #20). Every answer ends with a
# summary line, as llama-cli prints one, and /stats all tabulates the turns on a page.
. "$(dirname "$0")/tui_common.inc"
start 120 40
run chat --synthetic --synthetic-rate 1000
ready || fail "chat did not start"
screen | head -1 | grep -qE '^ ready │ synthetic 1000 tok/s │ ctx 0 │ RAM 78.00 GB │ think on │ F1 help' ||
  fail "status line: $(screen | head -1)"
send "first question" 1
ready 300 || fail "turn 1 did not end"
send "second question" 2
ready 300 || fail "turn 2 did not end"
screen | head -1 | grep -qE '^ ready │ synthetic 1000 tok/s │ ctx [0-9]+: [1-9][0-9]* reused, [0-9]+ prefilled │ RAM' ||
  fail "no context meter: $(screen | head -1)"
# the summary line of each turn
column 1 | sed 's/ *$//' | tr '\n' ' ' | sed 's/  */ /g' |
  grep -qE 'prompt [0-9]+ tok \([1-9][0-9]* reused\) [0-9.]+ [mu]?s · [0-9]+ tok [0-9.]+ tok/s · [0-9.]+ [kMG]?B/tok · hit [0-9.]+% · spec [0-9]+/[0-9]+' ||
  fail "no per-turn summary line"
t send-keys -l "/stats all"; t send-keys Enter
wait_for '^ *turn +ctx +reused +prefill +time +tokens +tok/s +B/tok +hit% +spec' 30 || fail "/stats all has no table header"
[ "$(screen | grep -cE '^ +[12] +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ [mu]?s +361 +[0-9.]+ +[0-9.]+ [kMG]?B +[0-9.]+ +[0-9]+/[0-9]+$')" = 2 ] ||
  fail "/stats all does not have a row per turn"
t send-keys Escape
wait_gone 'F1/Esc closes' 30 || fail "Esc did not close /stats all"
# hidden panes are marked
t send-keys F2
wait_for '│ F2 reasoning hidden │' 30 || fail "no marker for the hidden reasoning"
t send-keys F3
wait_for '│ F2 reasoning hidden, F3 panels hidden │' 30 || fail "no marker for the hidden panels"
t send-keys F2; t send-keys F3
wait_gone 'hidden │' 30 || fail "markers stayed"
quit
# narrow: the state whole, the rest dropped least useful first
start 45 30
run chat --synthetic --synthetic-rate 1000
wait_for '^ ready │ synthetic 1000 tok/s │ think on$' 100 || fail "45 columns: $(screen | head -1)"
quit
echo ok
