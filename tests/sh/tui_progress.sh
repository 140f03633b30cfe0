#!/bin/sh
# Screen test (issue #29): a long prompt's progress in the real chat (the
# engine on the k3-tiny fixture, in passes of 16 tokens) is said in the work
# done, with the prompt's tokens, the pass and layer and an ETA, and its
# share never goes back from one look at the status line to the next.
. "$(dirname "$0")/tui_common.inc"
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
export REMORA_PREFIX_CACHE_GB=0
start 160 40
run chat --model "$FX/k3-tiny" --prefill-chunk 16 --max-new 4
wait_for "$STATUS_RE" 300 || fail "the chat did not start"
ready 300 || fail "the chat is not ready"
# 900 words (about 2400 tokens, 2 s on a quiet machine): at 150 words the
# prompt took 0.36 s, and beside a second make test the 50 ms looks saw
# only two values of it
i=0; msg="Count the words:"; while [ $i -lt 900 ]; do msg="$msg w$i"; i=$((i + 1)); done
t send-keys -l "$msg"; t send-keys Enter
LABEL='^ prompt ([0-9]+)% of the work \([0-9]+ tok\), pass [0-9]+/[0-9]+ layer [0-9]/8(, ETA [0-9hms ]+)? │'
wait_for "$LABEL" 100 || fail "no progress in the work done in the status line"
# its share, every 50 ms until the reply starts (at most 30 s)
n=0; last=-1; seen=0; back=""
while [ $n -lt 600 ]; do
  line=$(screen | head -1)
  case $line in " prompt "*) ;; *) break ;; esac
  pc=$(printf "%s\n" "$line" | sed -n -E "s#$LABEL.*#\\1#p")
  if [ -n "$pc" ]; then
    [ "$pc" -lt "$last" ] && back="$back $last->$pc"
    [ "$pc" != "$last" ] && seen=$((seen + 1))
    last=$pc
  fi
  sleep 0.05; n=$((n + 1))
done
[ -z "$back" ] || fail "the progress went back:$back"
[ $seen -ge 3 ] || fail "the progress showed $seen values"
ready 300 || fail "the reply did not end"
echo "ok   the progress says the work done and moves forward only ($seen values, last $last%)"
quit
