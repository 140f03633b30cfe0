#!/bin/sh
# Screen test: a long prompt (the synthetic source's --synthetic-prompt-rate,
# passes reported layer by layer as the engine reports them) shows its
# progress in the work done (with the prompt's tokens, the pass and layer,
# and the ETA) in the status line and where the reply will appear, and it
# never goes back; the Timing and I/O panels follow it. Ctrl-C stops it:
# the chat is ready again at once, the turn is marked, the panels say how
# far it got, and the next question is answered, reusing what was computed.
# After /load the whole conversation is computed again, and the chat says so
# before it starts. /quit and SIGTERM during a long prompt exit at once, the
# terminal restored (143 for SIGTERM).
. "$(dirname "$0")/tui_common.inc"
[ $SYNTHETIC = 1 ] || { echo "skipped: needs the synthetic source"; exit 0; }
alt() { t display-message -p '#{alternate_on}'; }
start 120 40
# 20480 bytes (paste_it) are 5128 tokens: 3 passes, about 2.6 s at 2000 tokens/s
run chat --synthetic --synthetic-rate 200 --synthetic-prompt-rate 2000
ready || fail "chat did not start"
paste_it
wait_for '^ prompt [0-9]+% of the work \(5128 tok\), pass [123]/3 layer [0-9]+/93, ETA [0-9]+ s' 50 ||
  fail "no progress in the status line"
column 1 | grep -qE '█*░+ (prompt [0-9]+% of the work \(5128 tok\)|[0-9]+%), ETA [0-9]+ s' || fail "no progress bar in the answer pane"
column 3 | grep -qE 'prompt [0-9]+% of the work, 5128 tok' || fail "Timing panel does not follow the prompt"
column 3 | grep -qE 'pass [123]/3, layer [0-9]+/93' || fail "Timing panel does not show the pass"
column 3 | grep -qE 'pass [123]: read [0-9.]+ [kMG]?B of ~' || fail "I/O panel does not show the pass's reads"
screen | grep -q 'waiting for tokens' && fail "panels wait for tokens during the prompt"
# stop it in its second pass: the first stays computed
wait_for 'pass 2/3, layer' 50 || fail "the prompt never reached its second pass"
t send-keys C-c
ready 20 || fail "not ready within 2 s of Ctrl-C during the prompt"
column 1 | grep -q '\[interrupted during prompt processing\]' || fail "the stopped turn is not marked"
column 3 | grep -qE 'stopped at [0-9]+ of 5128' || fail "the panels do not say how far the prompt got"
screen | grep -qE '█+░* prompt' && fail "the progress bar stayed"
send "second" 2
wait_for 'Received 1 message: 6 bytes' 100 || fail "the next question was not answered"
ready 200 || fail "second turn did not end"
column 3 | grep -qE 'ctx [0-9]+, [1-9][0-9]* reused' || fail "the next turn did not reuse the computed passes"
# after /load the whole conversation is computed again: said before it starts
t send-keys -l "/save $SCRATCH/conv.jsonl"; t send-keys Enter
wait_for 'conversation saved' 50 || fail "/save failed"
t send-keys -l "/load $SCRATCH/conv.jsonl"; t send-keys Enter
wait_for 'conversation loaded: 2 turns' 50 || fail "/load failed"
send "third" 3
wait_for 'the whole conversation is computed again' 50 || fail "no notice of the full re-prefill"
wait_for 'Received 1 message: 5 bytes' 100 || fail "the third question was not answered"
ready 200 || fail "third turn did not end"
note_at=$(column 1 | grep -n 'the whole conversation is computed' | head -1 | cut -d: -f1)   # the pane's, not the hint row's
reply_at=$(column 1 | grep -n 'Received 1 message: 5 bytes' | cut -d: -f1)
[ -n "$note_at" ] && [ -n "$reply_at" ] && [ "$note_at" -lt "$reply_at" ] || fail "the notice is not before the reply"
# /quit during a long prompt
paste_it
wait_for 'prompt [0-9]+%' 50 || fail "second long prompt shows no progress"
t send-keys -l "/quit"; t send-keys Enter
at_prompt 20 || fail "/quit during the prompt did not exit within 2 s"
[ "$(alt)" = 0 ] || fail "alternate screen still on after /quit"
# SIGTERM during a long prompt: 143, the terminal restored
t send-keys -l "clear; $BIN chat --synthetic --synthetic-prompt-rate 1000; echo rc=\$?"; t send-keys Enter
ready || fail "chat did not start again"
paste_it
wait_for 'prompt [0-9]+%' 50 || fail "third long prompt shows no progress"
chat_pid=$(pgrep -P "$(t display-message -p '#{pane_pid}')")     # the shell's one child: our chat
[ -n "$chat_pid" ] || fail "no chat process under the shell"
kill -TERM "$chat_pid"
wait_for '^rc=143' 20 || fail "SIGTERM during the prompt did not exit 143 within 2 s"
[ "$(alt)" = 0 ] || fail "alternate screen still on after SIGTERM"
t send-keys -l "stty -a | grep -o ' icanon\| echo ' | tr -d ' ' | tr '\n' ,; echo"; t send-keys Enter
wait_for '^icanon,echo,' 30 || fail "terminal modes not restored after SIGTERM"
echo ok
