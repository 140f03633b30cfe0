#!/bin/sh
# Screen test: --panel-hz N bounds how often the panels and the status line
# are redrawn (issue #20): at 2 Hz the Timing panel's token count takes few
# distinct values a second while the answer text streams at 30 frames a
# second; at the default (10) many more. Frames are written with the
# cursor hidden and as DEC 2026 synchronized updates (read from tmux's
# pipe-pane, which gets what the chat writes). A rate out of [1, 60] is
# refused with exit 2. The counts are loose bounds, not timings.
. "$(dirname "$0")/tui_common.inc"
out=$("$BIN" chat --synthetic --panel-hz 0 2>&1); rc=$?
[ $rc = 2 ] || fail "--panel-hz 0 exited $rc"
echo "$out" | grep -q 'panel-hz' || fail "--panel-hz 0 said: $out"
# distinct token counts shown over 3 s
distinct() {
  i=0; : > "$SCRATCH/seen"
  while [ $i -lt 60 ]; do
    column 3 | sed -n 's/.*turn \([0-9][0-9]*\) tok.*/\1/p' | head -1 >> "$SCRATCH/seen"
    sleep 0.05; i=$((i + 1))
  done
  sort -u "$SCRATCH/seen" | grep -c .
}
start 120 40
run chat --synthetic --synthetic-rate 100 --panel-hz 2
ready || fail "chat did not start"
t pipe-pane -o "cat > $SCRATCH/tty"
send "a long answer please" 1
wait_for 'turn [0-9]+ tok' 100 || fail "no token count"
slow=$(distinct)
t pipe-pane
ready 300 || fail "the turn did not end"
quit
start 120 40
run chat --synthetic --synthetic-rate 100
ready || fail "chat did not start"
send "a long answer please" 1
wait_for 'turn [0-9]+ tok' 100 || fail "no token count"
fast=$(distinct)
ready 300 || fail "the turn did not end"
quit
echo "distinct token counts in 3 s: --panel-hz 2: $slow, default: $fast"
[ "$slow" -le 10 ] || fail "--panel-hz 2 showed $slow token counts in 3 s"
[ "$fast" -gt "$slow" ] || fail "the default rate ($fast) is not above 2 Hz ($slow)"
grep -q "$(printf '\033\\[?2026h')" "$SCRATCH/tty" || fail "no synchronized-output frames"
grep -q "$(printf '\033\\[?25l')" "$SCRATCH/tty" || fail "the cursor is not hidden while drawing"
echo ok
