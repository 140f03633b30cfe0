#!/bin/sh
# Screen test: typed text is never thrown away. A message entered while a
# reply streams stays in the input line (and is sent with Enter once the
# reply has ended); /system TEXT while generating changes nothing, neither
# the UI's copy nor the engine's, and waits in the input line too; Home and
# End move in the input line (Alt-Home scrolls the pane).
#
# The synthetic reply streams at 10 tokens/s (360 tokens: 36 s), so that
# it is still streaming when the checks that need it are done on a loaded
# machine (at 40 tokens/s its 9 s ran out there before /system was typed);
# Ctrl-C ends it, and the last turn too once its first words are seen.
# Every wait polls for its condition, with deadlines of 10 s or more.
. "$(dirname "$0")/tui_common.inc"
start 120 40
run chat $SOURCE --synthetic-rate 10
ready || fail "chat did not start"
send "first" 1
wait_for 'generating' 100 || fail "not generating"
t send-keys -l "typed while streaming"; t send-keys Enter
sleep 0.5   # Enter has been handled: a taken line would be gone by now
wait_for 'a reply is being generated: this waits in the input line' 100 || fail "no hint that the line waits"
wait_for '^> typed while streaming' 100 || fail "the message was taken from the input line"
column 2 | grep -qE '^turn 2( |$)' && fail "the message was sent while busy"
t send-keys C-e C-u
wait_for '^> *$' 100 || fail "the input line was not cleared"
t send-keys -l "/system Be a pirate."; t send-keys Enter
sleep 0.5
wait_for '^> /system Be a pirate.' 100 || fail "/system while generating was taken from the input line"
wait_for 'a reply is being generated: this waits' 100 || fail "/system while generating: no hint"
t send-keys C-e C-u
t send-keys C-c
ready 100 || fail "Ctrl-C did not stop the reply"
t send-keys -l "/system"; t send-keys Enter
wait_for 'system prompt: \(none\)' 100 || fail "/system while generating changed the UI's copy"
t send-keys -l "/save $SCRATCH/a.jsonl"; t send-keys Enter
wait_for 'conversation saved' 100 || fail "/save failed"
grep -q '"role":"system"' "$SCRATCH/a.jsonl" && fail "/system while generating reached the engine"
# now it applies, and the transcript says what the engine uses
t send-keys -l "/system Be a pirate."; t send-keys Enter
wait_for 'system prompt set' 100 || fail "/system did not set the prompt"
t send-keys -l "/save $SCRATCH/b.jsonl"; t send-keys Enter
# the first save's note is on the screen already: wait for the file itself
n=100; while [ ! -s "$SCRATCH/b.jsonl" ] && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
grep -q '"role":"system","content":"Be a pirate."' "$SCRATCH/b.jsonl" || fail "the system prompt was not saved"
# Home and End in the input line: "world", Home, "hello ", End, "!"
t send-keys -l "world"; t send-keys Home; t send-keys -l "hello "; t send-keys End; t send-keys -l "!"
wait_for '^> hello world!' 100 || fail "Home/End did not move in the input line"
t send-keys Enter
if [ $SYNTHETIC = 1 ]; then
  wait_for 'Received 1 message: 12 bytes' 300 || fail "the edited line was not sent"
  t send-keys C-c
fi
ready 300 || fail "turn did not end"
quit
echo ok
