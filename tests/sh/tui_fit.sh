#!/bin/sh
# Screen test: nothing on screen is cut with an ellipsis at 80x24 and
# 120x40 on the synthetic source's K3-shaped figures (issue #20): the panels
# choose shorter labels and drop their least useful field instead (the
# status line's own "…" after a state such as "measuring the storage" is not
# a cut, so row 1 is left out). Checked at open, while the prompt is
# processed, while streaming, zoomed (F4), and once the turn is over; and
# on a wide terminal the panel column grows, so the router gives 896
# experts more than 40 cells.
. "$(dirname "$0")/tui_common.inc"
# a cut: an ellipsis that ends a row or a pane's text (the "… 250 more
# lines" of a folded paste starts with one, as a marker)
cut_rows() { screen | sed '1d' | grep -nE '…( *$| *│|─)'; }
check() { c=$(cut_rows); [ -z "$c" ] || fail "$1: cut at $2: $c"; }
for size in "80 24" "120 40"; do
  set -- $size
  start "$1" "$2"
  run chat --synthetic --synthetic-rate 40 --synthetic-prompt-rate 4000
  wait_for 'synthetic K3-shaped' 50 || fail "no welcome"
  check "at open" "$1x$2"
  ready 100 || fail "not ready"
  paste_it
  wait_for 'prompt [0-9]+%' 50 || fail "no prompt progress"
  check "in the prompt" "$1x$2"
  wait_for 'tok/s' 200 || fail "no tokens"
  sleep 1
  check "streaming" "$1x$2"
  t send-keys F4
  sleep 0.5
  [ "$1" = 120 ] && { wait_for 'Router layer 1, zoom' 30 || fail "no zoom"; }
  check "zoomed" "$1x$2"
  t send-keys F4
  t send-keys C-c
  ready 100 || fail "Ctrl-C did not stop"
  sleep 0.3
  check "after the turn" "$1x$2"
  quit
done
start 250 60
run chat --synthetic --synthetic-rate 1000
ready || fail "not ready at 250 columns"
send "hi" 1
ready 300 || fail "turn did not end at 250 columns"
cells=$(column 3 | grep -E '^ +1 [ ░▒▓█]' | head -1 | sed 's/^ *1 //' | wc -L)
[ "$cells" -ge 80 ] || fail "the router map has $cells cells at 250 columns"
echo "router cells at 250 columns: $cells"
quit
echo ok
