#!/bin/sh
# Screen test: the live panels show real numbers that change from token to
# token (token count, timing, cache, I/O, speculation, router map).
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
column 3 | grep -qE '[0-9.]+ (KB|MB|GB|B)/tok' || fail "bytes per token missing"
column 3 | grep -qE '[0-9.]+(/[0-9.]+)? GB/s' || fail "read bandwidth missing"
if [ $SYNTHETIC = 1 ]; then
  column 3 | grep -qE '[0-9]+/[0-9]+ accepted [0-9]+%' || fail "speculation figures missing"
  column 3 | grep -qE 'Router' || fail "router panel missing"
  [ "$(column 3 | grep -cE '^ ?[0-9]+ .*[░▒▓█]')" -ge 10 ] || fail "router heat rows missing"
fi
t send-keys C-c
ready 100 || fail "Ctrl-C did not end the turn"
quit
echo ok
