#!/bin/sh
# Screen test (issue #29): the status line's context figure and the end
# marks after a stopped prompt, /load and --resume. A prompt stopped in its
# processing leaves the context as it was (the stopped turn is not in it);
# a loaded or resumed conversation shows its own context, not "ctx 0" nor
# the last turn's; its replies keep the marks the transcript has
# ([interrupted], [interrupted during prompt processing]).
. "$(dirname "$0")/tui_common.inc"
start 160 40
# the status line's context figure: "ctx 377: 349 reused, 28 prefilled" or "ctx 377"
ctx() { screen | head -1 | sed -n 's/.*│ ctx \([0-9][0-9]*\)[^│]*│.*/\1/p'; }
marks() {
  column 1 | grep -q '\[interrupted\]' || fail "$1: the stopped reply lost its [interrupted] mark"
  column 1 | grep -q '\[interrupted during prompt processing\]' || fail "$1: the stopped prompt lost its mark"
}

run chat --synthetic --no-think --synthetic-rate 8 --synthetic-prompt-rate 2000
ready || fail "chat did not start"
send "first question" 1
wait_for 'Received 1 message' 100 || fail "the answer did not start"
t send-keys C-c
wait_for '\[interrupted\]' 30 || fail "no interrupted mark"
ready 20 || fail "not ready after Ctrl-C"
wait_for '^ ready │[^│]*│ ctx [1-9]' 30 || fail "no context figure after turn 1"
c1=$(ctx)
paste_it
wait_for '^ prompt [0-9]' 50 || fail "the long prompt did not start"
t send-keys C-c
ready 20 || fail "not ready after Ctrl-C in the prompt"
wait_for '\[interrupted during prompt processing\]' 30 || fail "the stopped prompt is not marked"
screen | head -1 | grep -q "│ ctx $c1 │" || fail "after a stopped prompt the status says ctx $(ctx), not ctx $c1"
echo "ok   a stopped prompt leaves ctx $c1"

t send-keys -l "/save $SCRATCH/conv.jsonl"; t send-keys Enter
wait_for 'conversation saved' 50 || fail "/save failed"
grep -c '"interrupted":true' "$SCRATCH/conv.jsonl" | grep -q '^2$' || fail "the transcript lacks the two marks"
t send-keys -l "/clear"; t send-keys Enter
wait_for 'conversation cleared' 50 || fail "/clear failed"
screen | head -1 | grep -q "│ ctx 0 │" || fail "after /clear the status says ctx $(ctx)"
t send-keys -l "/load $SCRATCH/conv.jsonl"; t send-keys Enter
wait_for 'conversation loaded: 2 turns' 50 || fail "/load failed"
marks "/load"
c2=$(ctx)
[ -n "$c2" ] && [ "$c2" -gt 0 ] || fail "after /load the status says ctx '$c2'"
echo "ok   /load: both marks, ctx $c2"
quit

run chat --synthetic --no-think --resume
wait_for 'conversation loaded: 2 turns' 100 || fail "--resume did not load the conversation"
marks "--resume"
[ "$(ctx)" = "$c2" ] || fail "after --resume the status says ctx '$(ctx)', /load said $c2"
echo "ok   --resume: both marks, ctx $c2"
quit
