#!/bin/sh
# Screen test: a quit while the autosave writes a snapshot on a slow disk.
# The embedded model's chat runs with an LD_PRELOAD shim built from
# tests/tools/slow_write.c that makes writes to the snapshot's temporary
# file (*.state.tmp.*) slow while a flag file exists. Ctrl-D during the save
# keeps the screen up: the status line says "quitting: saving" and the hint
# row names the file being written; the chat exits once the save is done
# (0, within the save's time and 5 s), says where the conversation is, and
# leaves a whole snapshot (no temporary file) that --resume restores, mode
# 0600 like the transcript; until the rename the previous snapshot is the
# one on disk, byte for byte. A chat killed (SIGKILL) in the middle of a
# save leaves the previous snapshot as it was.
. "$(dirname "$0")/tui_common.inc"
command -v cc > /dev/null || { echo "cc is not installed"; exit 1; }
start 150 40
S="$XDG_STATE_HOME/remora/sessions"
SHIM=$SCRATCH/slow_write.so
cc -shared -fPIC -o "$SHIM" tests/tools/slow_write.c -ldl || fail "cannot build the shim"
FLAG=$SCRATCH/slow
chat_pid() { pgrep -P "$(t display-message -p '#{pane_pid}')"; }
cleanup() {
  p=$(chat_pid 2>/dev/null)
  [ -n "$p" ] && kill -KILL "$p" 2>/dev/null
  t kill-server 2>/dev/null
  rm -rf "$SCRATCH"
}
# the embedded model's snapshot (about 1.7 MB) at 64 kB per 100 ms: a save
# of about 2.6 s, past the quit's 1.5 s wait for the worker (the embedded
# model, not a random fixture, whose replies do not tokenise back into the
# same tokens, so that --resume can show the snapshot restored)
chat() {
  t send-keys -l "clear; LD_PRELOAD=$SHIM SLOW_WRITE_MATCH=.state.tmp. SLOW_WRITE_FLAG=$FLAG SLOW_WRITE_CHUNK=65536 SLOW_WRITE_MS=100 REMORA_PREFIX_CACHE_GB=0 $BIN chat --model assets/model $*; echo rc=\$?"
  t send-keys Enter
  ready 300 || fail "the embedded model's chat $* did not start"
}
tmp_of() { ls "$S"/*.state.tmp.* 2>/dev/null | head -1; }
mode() { stat -c %a "$1"; }

chat
send "What is 2 plus 3?" 1
ready 300 || fail "turn 1 did not end"
n=0; while [ -z "$(ls "$S"/*.state 2>/dev/null)" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
st=$(ls "$S"/*.state 2>/dev/null | head -1)
[ -s "$st" ] || fail "turn 1 was not autosaved with a snapshot"
n=0; while [ -n "$(tmp_of)" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
before=$(cksum < "$st")
size=$(stat -c %s "$st")

# the second turn's save is slow; Ctrl-D while it writes
touch "$FLAG"
send "And 4 plus 4?" 2
n=0; while [ -z "$(tmp_of)" ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
tmp=$(tmp_of)
[ -n "$tmp" ] || fail "the second turn's save did not start"
t0=$(date +%s%N)
t send-keys C-d
wait_for 'quitting: waiting for the autosave to finish writing' 20 || fail "the quit does not say what it waits for"
screen | grep -q '^ quitting: saving' || fail "the status line does not say the chat is saving before it quits"
[ -e "$tmp" ] || fail "the save ended before the quit was seen (the shim is too fast to test this)"
[ "$(cksum < "$st")" = "$before" ] || fail "the snapshot changed on disk while the new one was being written"
wait_for '^rc=' 600 || fail "the chat did not exit after the save"
secs=$((($(date +%s%N) - t0) / 1000000))
wait_for '^rc=0' 10 || fail "the quit after the save did not exit 0"
screen | grep -q "remora chat: the conversation is saved in $S/" || fail "the quit does not say where the conversation is"
[ -z "$(tmp_of)" ] || fail "a temporary file was left: $(tmp_of)"
[ "$(cksum < "$st")" != "$before" ] || fail "the second turn's snapshot was not written"
[ "$(mode "$st")" = 600 ] || fail "the snapshot is mode $(mode "$st"), not 600"
tr=${st%.state}.jsonl
[ "$(mode "$tr")" = 600 ] || fail "the transcript is mode $(mode "$tr"), not 600"
grep -q "And 4 plus 4" "$tr" || fail "the transcript lacks the second turn"
echo "the quit waited $secs ms for the save of a $size-byte snapshot (64 kB per 100 ms)"

# the snapshot is whole: --resume restores from it (the shim's flag is off)
rm -f "$FLAG"
chat --resume
n=0
while ! column 1 | tr -d ' \n' | grep -q "conversationloaded:2turns,from$S/.*itsstaterestoredfromthesnapshot" && [ $n -lt 300 ]; do
  sleep 0.1; n=$((n + 1))
done
[ $n -lt 300 ] || fail "--resume did not restore from the snapshot written during the quit"

# SIGKILL in the middle of the next save: the previous snapshot stays whole
before=$(cksum < "$st")
touch "$FLAG"
send "And 5 plus 5?" 3
n=0; while [ -z "$(tmp_of)" ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
[ -n "$(tmp_of)" ] || fail "the third turn's save did not start"
kill -KILL "$(chat_pid)"
wait_for 'rc=137' 50 || fail "SIGKILL did not end the chat"
[ "$(cksum < "$st")" = "$before" ] || fail "a save cut by SIGKILL changed the previous snapshot"
echo ok
