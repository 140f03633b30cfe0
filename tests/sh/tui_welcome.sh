#!/bin/sh
# Screen test: the answer pane opens with a welcome (issue #20): the model's
# name, parameters, layers and experts, the RAM plan, then the storage
# ceiling once measured, and where help is; for the embedded model, what it
# can do and prompts to try, shown from the top even at 80x24. The welcome
# is ordinary text: the first reply scrolls it away.
. "$(dirname "$0")/tui_common.inc"
# the answer pane's text as one line (wrapped rows joined)
joined() { column 1 | sed 's/ *$//' | tr '\n' ' ' | sed 's/  */ /g'; }
wait_joined() {
  n=$2
  while [ "$n" -gt 0 ]; do joined | grep -qE -- "$1" && return 0; sleep 0.1; n=$((n - 1)); done
  return 1
}
start 120 40
run chat --synthetic --synthetic-rate 1000
wait_for 'synthetic K3-shaped source: 2\.80 T' 50 || fail "no welcome on the synthetic source"
joined | grep -q '93 layers, 92 with 896 routed experts (16 a token' ||
  fail "the welcome does not give layers and experts"
joined | grep -q 'RAM (budget 78.00 GB): spine 14.00 GB, 100% resident; expert cache 64.00 GB' ||
  fail "the welcome does not give the RAM plan"
column 1 | grep -q '^F1: the keys' || fail "the welcome does not point at F1"
wait_joined 'storage ceiling: 6.80 GB/s \(median of a 4.0 s probe\)' 80 || fail "the storage ceiling was not added"
column 1 | grep -q 'Try:' && fail "demo prompts on a source that is not the embedded model"
ready || fail "not ready"
send "hello" 1
ready 300 || fail "the turn did not end"
column 1 | grep -q 'synthetic K3-shaped' && fail "the welcome did not scroll away"
quit
# the embedded model, at the smallest common size: the welcome's first line shows
start 80 24
run chat --model assets/model
wait_for '^remora-k3-demo: 56.5 M parameters' 100 || fail "no welcome for the embedded model"
ready 100 || fail "not ready"
t send-keys PageDown
wait_for '^  What is 37\*12\?' 30 || fail "no example prompts"
quit
echo ok
