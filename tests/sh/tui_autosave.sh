#!/bin/sh
# Screen test: the conversation is kept as it goes. After every turn it is
# autosaved in $XDG_STATE_HOME/remora/sessions/; SIGTERM, SIGHUP, Ctrl-D in
# the middle of a reply and /quit lose no turn and say where it was saved;
# `remora chat --resume` brings the last one back and goes on saving into
# it, `--resume FILE` a given one, `/load last` the previous chat's; /stats
# shows the folder and its bound; a full disk under the folder is a note,
# the chat goes on, Ctrl-D then asks once and the quit says the turn was not
# saved. On the embedded model, /load says whether the state came
# from the snapshot or is computed again (a damaged snapshot), and a failed
# /load changes nothing (a /save afterwards gives the same lines); a disk
# that fills between two turns leaves the first turn's snapshot whole, and
# --resume restores from it.
. "$(dirname "$0")/tui_common.inc"
start 150 40
S="$XDG_STATE_HOME/remora/sessions"
chat_pid() { pgrep -P "$(t display-message -p '#{pane_pid}')"; }   # the shell's one child: our chat
# a chat still running when the test ends saves on its way out: it is
# stopped (and waited for, a bounded time) before the scratch folder goes
cleanup() {
  p=$(chat_pid 2>/dev/null)
  [ -n "$p" ] && kill -TERM "$p" 2>/dev/null
  n=50; while [ -n "$p" ] && kill -0 "$p" 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
  t kill-server 2>/dev/null
  mountpoint -q "$SCRATCH/small" 2>/dev/null && umount "$SCRATCH/small"
  mountpoint -q "$SCRATCH/full" 2>/dev/null && umount "$SCRATCH/full"
  rm -rf "$SCRATCH"
}
# wait_text REGEX [TRIES]: the answer pane's text, wrapped lines joined and
# blanks left out (a note can be longer than the pane), matches REGEX
# (whose blanks are left out too)
wait_text() {
  re=$(printf '%s' "$1" | tr -d ' ')
  n=${2:-50}
  while [ "$n" -gt 0 ]; do
    column 1 | tr -d ' \n' | grep -qE -- "$re" && return 0
    sleep 0.1; n=$((n - 1))
  done
  return 1
}
newest() { ls -t "$S"/*.jsonl 2>/dev/null | head -1; }
# chat ARGS...: a chat in a cleared pane, its exit status echoed after it
chat() { t send-keys -l "clear; $BIN chat $SOURCE $*; echo rc=\$?"; t send-keys Enter; ready 150 || fail "chat $* did not start"; }
said() { wait_for "remora chat: the conversation is saved in $S/" 50 || fail "$1: the quit message does not say where"; }

# a turn, then SIGTERM
chat --synthetic-rate 1000
send "alpha before sigterm" 1
ready 200 || fail "turn 1 did not end"
f=$(newest); [ -n "$f" ] && grep -q "alpha before sigterm" "$f" || fail "the turn was not autosaved"
kill -TERM "$(chat_pid)"
wait_for '^rc=' 50 || fail "SIGTERM did not end the chat"
said SIGTERM

# --resume: the last conversation back, saved on into the same file; then SIGHUP
chat --synthetic-rate 1000 --resume
wait_text "conversation loaded: 1 turns, from $f" 50 || fail "--resume did not load $f"
screen | grep -q "alpha before sigterm" || fail "--resume did not show the turn"
send "beta after resume" 2
ready 200 || fail "turn 2 did not end"
[ "$(newest)" = "$f" ] && grep -q "beta after resume" "$f" || fail "the resumed chat did not save into $f"
kill -HUP "$(chat_pid)"
wait_for '^rc=' 50 || fail "SIGHUP did not end the chat"
said SIGHUP

# Ctrl-D in the middle of a reply: the stopped turn is kept
chat --synthetic-rate 20 --resume
send "gamma stopped by ctrl-d" 3
wait_for 'generating' 50 || fail "turn 3 is not generating"
t send-keys C-d
sleep 0.5
screen | grep -q '^rc=' || t send-keys C-d        # a chat that asks once
wait_for '^rc=' 50 || fail "Ctrl-D did not end the chat"
said Ctrl-D
grep -q "gamma stopped by ctrl-d" "$f" && [ "$(grep -c '"role":"assistant"' "$f")" = 3 ] ||
  fail "the turn stopped by Ctrl-D was lost: $(cat "$f")"

# --resume FILE, /stats, /quit
cp "$f" "$SCRATCH/given.jsonl"
chat --synthetic-rate 1000 --resume "$SCRATCH/given.jsonl"
wait_text "conversation loaded: 3 turns, from $SCRATCH/given.jsonl" 50 || fail "--resume FILE did not load it"
t send-keys -l "/stats"; t send-keys Enter
wait_text "sessions: autosaved to $S/.*kept, .*of 2.0 GB" 50 || fail "/stats does not show the sessions folder"
t send-keys -l "/quit"; t send-keys Enter
wait_for '^rc=0' 50 || fail "/quit did not end the chat"

# /load last in a new chat: the previous chat's conversation
chat --synthetic-rate 1000
t send-keys -l "/load last"; t send-keys Enter
wait_text "conversation loaded: 3 turns, from $S/" 50 || fail "/load last did not load the last session"
screen | grep -q "gamma stopped by ctrl-d" || fail "/load last shows another conversation"
t send-keys -l "/quit"; t send-keys Enter
wait_for '^rc=0' 50 || fail "/quit did not end the chat"

# a full disk under the sessions folder: a note, and the chat goes on
mkdir -p "$SCRATCH/small"
if mount -t tmpfs -o size=64k remora-test-sessions "$SCRATCH/small" 2>/dev/null; then
  dd if=/dev/zero of="$SCRATCH/small/filler" bs=1k count=64 2>/dev/null
  t send-keys -l "clear; XDG_STATE_HOME=$SCRATCH/small $BIN chat $SOURCE --synthetic-rate 1000; echo rc=\$?"
  t send-keys Enter
  ready 150 || { umount "$SCRATCH/small"; fail "chat on a full disk did not start"; }
  send "delta on a full disk" 1
  wait_text "autosave: .*No space left on device" 200 || { umount "$SCRATCH/small"; fail "no note of the failed autosave"; }
  ready 50 || { umount "$SCRATCH/small"; fail "the chat did not go on after the failed autosave"; }
  # the turn is at risk now: Ctrl-D asks once, and the quit says it was not saved
  t send-keys C-d
  wait_for '1 turn not saved \(/save FILE\): Ctrl-D again to quit' 30 ||
    { umount "$SCRATCH/small"; fail "Ctrl-D after a failed autosave did not ask"; }
  t send-keys C-d
  wait_for '^rc=1' 50 || { umount "$SCRATCH/small"; fail "the quit after a failed autosave did not exit 1"; }
  screen | tr -d '\n' | grep -q "remora chat: the conversation could not be saved: .*No space left on device" ||
    { umount "$SCRATCH/small"; fail "the quit did not say the conversation was not saved"; }
  umount "$SCRATCH/small"
else
  fail "cannot mount a tmpfs for the full-disk case (needs root)"
fi

# the embedded model: /load says where the state comes from, a failed one
# changes nothing
if [ "$SYNTHETIC" = 1 ]; then
  t send-keys -l "clear; REMORA_PREFIX_CACHE_GB=0 $BIN chat --model assets/model; echo rc=\$?"; t send-keys Enter
  ready 300 || fail "the embedded model's chat did not start"
  send "What is 2 plus 3?" 1
  ready 300 || fail "the embedded model's turn did not end"
  t send-keys -l "/save $SCRATCH/m.jsonl"; t send-keys Enter
  wait_for 'conversation saved' 50 || fail "/save on the embedded model"
  [ -s "$SCRATCH/m.state" ] || fail "/save wrote no snapshot"
  t send-keys -l "/load $SCRATCH/m.jsonl"; t send-keys Enter
  wait_text "its state restored from the snapshot \([0-9]* tokens, [0-9.]* MB, in [0-9.]* s\)" 100 || fail "/load did not restore the state"
  # a failed /load changes nothing: a /save afterwards gives the same lines
  printf '{"role":"user","content":"x"}\n{"role":"nobody"}\n' > "$SCRATCH/bad.jsonl"
  t send-keys -l "/load $SCRATCH/bad.jsonl"; t send-keys Enter
  wait_text "bad.jsonl:2" 50 || fail "a bad transcript was not refused with its line"
  t send-keys -l "/save $SCRATCH/after.jsonl"; t send-keys Enter
  wait_text 'bad.jsonl:2.*conversation saved' 50 || fail "the second /save did not say so"
  cmp -s "$SCRATCH/m.jsonl" "$SCRATCH/after.jsonl" || fail "a failed /load changed the conversation"
  head -c 500 "$SCRATCH/m.state" > "$SCRATCH/m.cut" && mv "$SCRATCH/m.cut" "$SCRATCH/m.state"
  t send-keys -l "/load $SCRATCH/m.jsonl"; t send-keys Enter
  wait_text "its state is computed again at the next message \($SCRATCH/m.state: truncated" 100 ||
    fail "/load of a damaged snapshot did not say so"
  t send-keys -l "/quit"; t send-keys Enter
  wait_for '^rc=0' 100 || fail "/quit did not end the embedded model's chat"

  # a disk that fills between two turns: the autosave's note, the first
  # turn's snapshot left whole, and --resume restores from it
  mkdir -p "$SCRATCH/full"
  mount -t tmpfs -o size=8m remora-test-full "$SCRATCH/full" 2>/dev/null ||
    fail "cannot mount a tmpfs for the full-disk case (needs root)"
  FS="$SCRATCH/full/remora/sessions"
  echat() { t send-keys -l "clear; XDG_STATE_HOME=$SCRATCH/full REMORA_PREFIX_CACHE_GB=0 $BIN chat --model assets/model $*; echo rc=\$?"; t send-keys Enter; ready 300 || fail "the embedded model's chat $* did not start"; }
  echat
  send "What is 2 plus 3?" 1
  ready 300 || fail "the embedded model's turn did not end"
  st=$(ls "$FS"/*.state 2>/dev/null | head -1)
  [ -s "$st" ] || fail "the autosave wrote no snapshot"
  sum=$(cksum < "$st")
  avail=$(df -k --output=avail "$SCRATCH/full" | tail -1)
  dd if=/dev/zero of="$SCRATCH/full/filler" bs=1k count=$((avail - 64)) 2>/dev/null
  send "And 4 plus 4?" 2
  wait_text "autosave: $st: cannot write: No space left on device" 300 || fail "no note of the autosave on a full disk"
  ready 50 || fail "the chat did not go on after the failed autosave"
  [ "$(cksum < "$st")" = "$sum" ] || fail "the failed autosave changed the first turn's snapshot"
  t send-keys -l "/quit"; t send-keys Enter
  wait_for "^rc=" 100 || fail "/quit on a full disk did not end the chat"
  grep -q "And 4 plus 4" "$FS"/*.jsonl || fail "the full disk lost the second turn's transcript"
  rm -f "$SCRATCH/full/filler"
  echat --resume
  wait_text "conversation loaded: 2 turns, from $FS/.*its state restored from the snapshot" 300 ||
    fail "--resume did not restore from the first turn's snapshot"
  # the next turn computes only what the snapshot does not hold, and says so
  send "And 5 plus 5?" 3
  ready 300 || fail "the resumed chat's turn did not end"
  column 3 | grep -qE "ctx [0-9]+, [0-9]+ reused, [1-9][0-9]* restored" || fail "the Timing panel does not count the restored tokens"
  t send-keys -l "/stats"; t send-keys Enter
  wait_text "prompt: ctx [0-9]+, [0-9]+ reused, [1-9][0-9]* restored, [0-9]+ prefilled" 50 ||
    fail "/stats does not count the restored tokens"
  t send-keys -l "/quit"; t send-keys Enter
  wait_for '^rc=0' 100 || fail "/quit did not end the resumed chat"
  umount "$SCRATCH/full"
fi
echo ok
