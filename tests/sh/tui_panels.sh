#!/bin/sh
# Screen test: the live panels show real numbers that change from token to
# token (token count, timing, cache, I/O, speculation, router map), say
# their windows, count the prompt as context, reused and prefilled tokens,
# number the router's rows as the model's layers, and mark the tokens of a
# speculative verify pass.
. "$(dirname "$0")/tui_common.inc"
start 120 40
run chat $SOURCE --synthetic-rate 15
ready || fail "chat did not start"
send "numbers please" 1
wait_for 'turn [0-9]+ tok +[0-9.]+ tok/s' 100 || fail "no token count in the timing panel"
count() { column 3 | sed -n 's/.*turn \([0-9][0-9]*\) tok.*/\1/p' | head -1; }
timing() { column 3 | grep -E 'last [0-9.]+ +med [0-9.]+ +p90 [0-9.]+ m?s' | head -1; }
a=$(count); ta=$(timing)
[ -n "$a" ] && [ -n "$ta" ] || fail "timing figures missing"
n=50; b=$a
while [ $n -gt 0 ] && [ "$b" = "$a" ]; do sleep 0.1; b=$(count); n=$((n - 1)); done
[ "$b" -gt "$a" ] || fail "token count did not advance ($a -> $b)"
# timing figures move too (over a few tokens)
n=50; tb=$ta
while [ $n -gt 0 ] && [ "$tb" = "$ta" ]; do sleep 0.1; tb=$(timing); n=$((n - 1)); done
[ "$tb" != "$ta" ] || fail "timing line never changed: $ta"
column 3 | grep -qE 'hit [0-9.]+%' || fail "cache hit rate missing"
column 3 | grep -qE '[0-9.]+ (kB|MB|GB|B)/tok' || fail "bytes per token missing"
column 3 | grep -qE '[0-9.]+(/[0-9.]+)? GB/s' || fail "read bandwidth missing"
if [ $SYNTHETIC = 1 ]; then
  column 3 | grep -qE '[0-9]+/[0-9]+ accepted [0-9]+%' || fail "speculation figures missing"
  column 3 | grep -qE 'Router' || fail "router panel missing"
  [ "$(column 3 | grep -cE '^ ?[0-9]+ .*[░▒▓█]')" -ge 10 ] || fail "router heat rows missing"
fi
t send-keys C-c
ready 100 || fail "Ctrl-C did not end the turn"
if [ $SYNTHETIC = 1 ]; then
  # figures that tell the truth, on whole turns (fast): the second turn's
  # prompt reuses the first's context; no turn ends on the end-of-message
  # token's empty record
  quit
  run chat $SOURCE --synthetic-rate 1000
  ready || fail "chat did not start again"
  send "numbers please" 1
  ready 300 || fail "first turn did not end"
  send "and more" 2
  ready 300 || fail "second turn did not end"
  column 3 | grep -qE 'ctx [0-9]+, [1-9][0-9]* reused, [0-9]+ prefill' || fail "no ctx/reused/prefilled figure"
  t send-keys -l "/stats"; t send-keys Enter
  wait_for 'last turn: ' 30 || fail "/stats gave no summary"
  column 1 | sed 's/ *$//' | tr '\n' ' ' |
    grep -qE 'prompt: ctx [0-9]+, [1-9][0-9]* reused, [0-9]+ prefilled in [0-9.]+ [mu]?s' ||
    fail "/stats does not give the prompt's accounting"
  column 3 | grep -qE 'last 0\.0 ' && fail "the turn ends on 'last 0.0'"
  column 3 | grep -q '(last -)' && fail "the turn ends on '(last -)'"
  column 3 | grep -qE 'Timing, last 32 tok' || fail "the Timing panel does not say its window"
  column 3 | grep -qE 'reuse [0-9]+% last 32' || fail "the router's reuse does not say its window"
  column 3 | grep -q 'ceiling: median of a 4.0 s probe' || fail "the I/O ceiling does not say how it was measured"
  # router rows are the model's layers, as --trace numbers them
  column 3 | grep -q 'Router layers 1-92' || fail "router title not in model layers"
  column 3 | grep -qE '^  1 [░▒▓█ ]' || fail "router rows not numbered from layer 1"
  t send-keys F4
  wait_for 'Router layer 1, zoom \(1-92\)' 30 || fail "zoom title not in model layers"
  t send-keys M-Down
  wait_for 'Router layer 2, zoom' 30 || fail "Alt-Down did not move the zoom"
  # the tokens of a verify pass: magenta in the sparkline, marked in the zoom
  column 3 | grep -q '┆' || fail "no verify-pass mark in the zoom"
  t capture-pane -p -e | grep -E '[▁▂▃▄▅▆▇█]' | grep -q "$(printf '\[35m')" ||
    fail "no verify-pass colour in the sparkline"
fi
quit
echo ok
