#!/bin/sh
# Screen test: what an expert wants from the panels (issue #20), on the
# synthetic source at 250x60: the whole turn's tokens/s in the Timing panel;
# in Speculation, verify passes, drafts kept per pass, tokens gained against
# plain decoding and drafts the cost gate declined; in the router, each
# row's turn reuse and bytes read per token, and, zoomed, the layer's turn
# figures with its hot experts and an expert-id axis.
. "$(dirname "$0")/tui_common.inc"
start 250 60
run chat --synthetic --synthetic-rate 1000
ready || fail "chat did not start"
send "numbers please" 1
ready 300 || fail "the turn did not end"
column 3 | grep -qE '^ tok/s [▁▂▃▄▅▆▇█]{8,}' || fail "no whole-turn tokens/s history"
column 3 | grep -qE '[0-9]+ passes, [0-9.]+ kept each, [+-][0-9]+ tok vs plain, [0-9]+ declined' ||
  fail "no speculation depth"
[ "$(column 3 | grep -cE '^ +[0-9]+ .* [0-9]+% +[0-9.]+[BKMGT]$')" -ge 10 ] || fail "router rows lack reuse and bytes"
column 3 | grep -q 'right: turn reuse, read/tok' || fail "the router legend does not explain the right column"
column 3 | grep -q 'reused █ new █ read █ in flight' || fail "the router legend has no residency marks"
# while the cache fills, the map marks reads (red heat cells)
quit
run chat --synthetic --synthetic-rate 40
ready || fail "chat did not start again"
send "numbers please" 1
n=50; red=0
while [ $n -gt 0 ]; do
  t capture-pane -p -e | grep -qE "$(printf '\033')\\[[0-9;]*31m[░▒▓█]" && { red=1; break; }
  sleep 0.1; n=$((n - 1))
done
[ $red = 1 ] || fail "no cell of the map is marked read"
t send-keys C-c
ready 100 || fail "Ctrl-C did not stop"
t send-keys F4
wait_for 'Router layer 1, zoom' 30 || fail "no zoom"
column 3 | grep -qE 'turn: reuse [0-9]+%, read [0-9.]+[BKMGT]/tok, hot [0-9]+ [0-9]+ [0-9]+' ||
  fail "the zoom lacks the layer's turn figures"
column 3 | grep -qE '^ +0 +448 +895 *$' || fail "the zoom has no expert-id axis"
quit
echo ok
