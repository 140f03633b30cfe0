#!/bin/sh
# Screen test: every glyph is drawn in its own colour (the SGR codes tmux
# reports with capture-pane -e, read by tests/sh/lib/sgr.py). The first word
# of a line once took the colour drawn just before it: a one-word answer came
# out bold cyan like the user's message, error notes started cyan, the
# focused pane's title was never highlighted and the router legend's
# swatches had no colour.
. "$(dirname "$0")/tui_common.inc"
# attr TEXT [COLS]: "fg=.. bg=.. bold=.. dim=.." of TEXT's first character
attr() {
  if [ -n "$2" ]; then t capture-pane -p -e | python3 tests/sh/lib/sgr.py --cols "$2" "$1"
  else t capture-pane -p -e | python3 tests/sh/lib/sgr.py "$1"; fi | sed "s/^.* \(fg=\)/\1/"
}
# want TEXT PATTERN [COLS]
want() {
  got=$(attr "$1" "$3")
  printf '%s\n' "$got" | grep -qE -- "$2" || fail "'$1' drawn with $got, wanted $2"
}
start 120 40
run chat --synthetic --synthetic-rate 1000
ready || fail "chat did not start"
send "hi" 1
ready 300 || fail "turn did not end"
want "› hi" 'fg=36 .*bold=1'                       # the user's line: cyan, bold
want "Received" 'fg=default .*bold=0 dim=0' 0:44   # the answer: plain
want "Answer" 'fg=33 .*bold=1'                     # focused title: yellow
want "Reasoning" 'fg=default .*bold=1'
want "█ reused" 'fg=32'                            # legend swatches as in the map
want "█ new" 'fg=33'
t send-keys Tab
wait_for Reasoning 10
n=20; until attr Reasoning | grep -q 'fg=33'; do n=$((n - 1)); [ $n -gt 0 ] || break; sleep 0.1; done
want "Reasoning" 'fg=33 .*bold=1'
want "Answer" 'fg=default .*bold=1'
t send-keys -l "/nosuch"; t send-keys Enter
wait_for 'unknown command' 30 || fail "no error note"
want "unknown command" 'fg=31 .*bold=1'            # error notes: red from the first word
quit

# a one-word answer of the embedded model
[ -f assets/model/config.json ] || { echo "ok (no embedded model)"; exit 0; }
t send-keys -l "clear"; t send-keys Enter
run chat --model assets/model
wait_for '^ measuring the storage' 300 || fail "chat on the embedded model did not start"
# sent while the storage is measured: it waits for the probe, which it ends early
t send-keys -l "What is 37*12?"; t send-keys Enter
wait_for 'turn 1' 100 || fail "the queued message was not sent"
ready 600 || fail "the embedded model did not answer"
column 1 | grep -q '^444 *$' || fail "expected the answer 444"
want "444" 'fg=default .*bold=0 dim=0' 0:44
quit
echo ok
