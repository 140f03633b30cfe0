#!/bin/sh
# Screen test (issue #29): the quit note's command goes on from the
# conversation as printed. It names the program as it was run
# (./build/rel/remora from the source tree, plain remora from the PATH) and
# the source given; typed back as it is, it loads the turn.
. "$(dirname "$0")/tui_common.inc"
start 220 30
# joined: the screen's lines as one (a long note wraps)
joined() { screen | tr -d '\n'; }
note_cmd() { joined | sed -n 's/.*remora chat: the conversation is saved in [^ ]* (\(.*\) goes on from it).*/\1/p'; }

case $BIN in /*) REL=$BIN ;; *) REL=./${BIN#./} ;; esac
t send-keys -l "clear; $REL chat --synthetic --synthetic-rate 1000"; t send-keys Enter
ready 150 || fail "the chat did not start"
send "alpha before the hint" 1
ready 200 || fail "turn 1 did not end"
quit
cmd=$(note_cmd)
[ "$cmd" = "$REL chat --synthetic --resume" ] || fail "the quit note says '$cmd', not '$REL chat --synthetic --resume'"
echo "ok   the quit note names the program as run: $cmd"

# typed back as printed, it goes on from the conversation
t send-keys -l "clear; $cmd"; t send-keys Enter
ready 150 || fail "'$cmd' did not start"
wait_for "conversation loaded: 1 turns" 50 || fail "'$cmd' did not load the conversation"
screen | grep -q "alpha before the hint" || fail "'$cmd' did not show the turn"
quit
echo "ok   '$cmd' goes on from it"

# from the PATH it is plain remora
t send-keys -l "clear; PATH=$(cd "$(dirname "$BIN")" && pwd):\$PATH; cd $SCRATCH; $(basename "$BIN") chat --synthetic --synthetic-rate 1000"
t send-keys Enter
ready 150 || fail "the chat from the PATH did not start"
send "beta from the path" 1
ready 200 || fail "turn 1 did not end"
quit
cmd=$(note_cmd)
[ "$cmd" = "$(basename "$BIN") chat --synthetic --resume" ] || fail "from the PATH the note says '$cmd'"
echo "ok   from the PATH: $cmd"
