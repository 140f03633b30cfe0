#!/bin/sh
# Screen test: /save and /load. A failed /load (a corrupt file, a missing
# one, a folder) says which file, line and fault, and changes nothing: the
# panes keep the conversation and a /save afterwards still holds it; "~" is
# the home folder; a folder is refused by name ("is a directory"), never a
# temporary file's name; commands are case-insensitive.
. "$(dirname "$0")/tui_common.inc"
start 200 50
run chat $SOURCE --synthetic-rate 1000
ready || fail "chat did not start"
send "remember the walrus" 1
ready 300 || fail "turn did not end"
printf '{"role":"user","content":"intruder"}\nnot json at all\n' > "$SCRATCH/corrupt.jsonl"
mkdir "$SCRATCH/adir"
t send-keys -l "/load $SCRATCH/corrupt.jsonl"; t send-keys Enter
wait_for "corrupt.jsonl:2: not valid JSON" 50 || fail "corrupt file: no file:line: reason"
t send-keys -l "/load $SCRATCH/adir"; t send-keys Enter
wait_for "adir: is a directory" 50 || fail "a folder was not refused"
t send-keys -l "/load $SCRATCH/nothing.jsonl"; t send-keys Enter
wait_for "nothing.jsonl: cannot open: No such file" 50 || fail "missing file: no reason"
column 1 | grep -q '› remember the walrus' || fail "the panes lost the conversation"
screen | grep -q intruder && fail "the failed load showed its messages"
# the conversation is intact: saved with ~ (the home folder) and an upper-case command
t send-keys -l "/SAVE ~/kept.jsonl"; t send-keys Enter
wait_for 'conversation saved' 50 || fail "/SAVE ~/kept.jsonl did not save"
grep -q '"content":"remember the walrus"' "$SCRATCH/kept.jsonl" || fail "the saved conversation lost the turn"
t send-keys -l "/save /"; t send-keys Enter
wait_for '/: is a directory' 50 || fail "/save / was not refused by name"
t send-keys -l "/save $SCRATCH/none/x.jsonl"; t send-keys Enter
wait_for "none/x.jsonl: cannot write: No such file" 50 || fail "no reason for a failed save"
screen | grep -q '\.tmp\.' && fail "an error names a temporary file"
# and back: /Load with ~ brings both panes back
t send-keys -l "/clear"; t send-keys Enter
wait_for 'conversation cleared' 50 || fail "/clear failed"
t send-keys -l "/Load ~/kept.jsonl"; t send-keys Enter
wait_for 'conversation loaded: 1 turns' 50 || fail "/Load ~/kept.jsonl failed"
column 1 | grep -q '› remember the walrus' || fail "the loaded conversation is not shown"
quit
echo ok
