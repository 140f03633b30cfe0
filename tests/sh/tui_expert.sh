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
t send-keys F4
wait_for 'Router layer 1, zoom' 30 || fail "no zoom"
column 3 | grep -qE 'turn: reuse [0-9]+%, read [0-9.]+[BKMGT]/tok, hot [0-9]+ [0-9]+ [0-9]+' ||
  fail "the zoom lacks the layer's turn figures"
column 3 | grep -qE '^ +0 +448 +895 *$' || fail "the zoom has no expert-id axis"
quit
echo ok
