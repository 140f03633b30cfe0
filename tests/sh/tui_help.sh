#!/bin/sh
# Screen test: F1 is a full-screen page (issue #20): keys and commands as
# two columns with a hanging indent, a legend of the panels' figures and
# colours, scrolled with PgDn, closed with F1 or Esc; it opens and closes
# while a reply streams (the status line goes on counting, the reply goes
# on underneath); /help is the same page, and /stats while generating a
# live page of the turn's figures instead of a hint. Typed text closes a
# page and goes to the input line.
. "$(dirname "$0")/tui_common.inc"
start 80 24
run chat $SOURCE --synthetic-rate 20
ready || fail "chat did not start"
t send-keys F1
wait_for '^ *Ctrl-C +stop generating \(the partial answer is kept\); else clear$' 30 || fail "F1 did not open the help page"
# the hanging indent: the wrapped text of Ctrl-C starts under its first line's text
col1=$(screen | grep -E '^ *Ctrl-C +stop' | sed 's/stop.*//' | wc -L)
col2=$(screen | grep -A1 -E '^ *Ctrl-C +stop' | tail -1 | sed 's/[^ ].*//' | wc -L)
[ "$col1" = "$col2" ] || fail "no hanging indent ($col1 vs $col2)"
i=0
while [ $i -lt 5 ] && ! screen | grep -qE '^ *green +experts the previous token chose too'; do
  t send-keys PageDown; sleep 0.3; i=$((i + 1))
done
screen | grep -qE '^ *green +experts the previous token chose too' || fail "no router legend after PgDn"
t send-keys Escape
wait_gone 'F1/Esc closes' 30 || fail "Esc did not close the help"
wait_for 'Timing' 30 || fail "the panels did not come back"
# while streaming
send "tell me more" 1
t send-keys F1
wait_for 'Help .* F1/Esc closes' 30 || fail "F1 did not open while streaming"
c1=$(screen | head -1)
sleep 0.6
c2=$(screen | head -1)
[ "$c1" != "$c2" ] || fail "the status line stopped while the help was open: $c1"
echo "$c2" | grep -q 'generating' || fail "the status line does not say generating: $c2"
t send-keys F1
wait_gone 'F1/Esc closes' 30 || fail "F1 did not close the help while streaming"
screen | grep -q 'Help .* closes' && fail "help left on screen"
t send-keys -l "/stats"; t send-keys Enter
wait_for 'Statistics .* F1/Esc closes' 30 || fail "/stats while generating did not open its page"
wait_for '^ *tokens +[0-9]+ tokens at [0-9.]+ tok/s' 30 || fail "the stats page has no token figures"
a=$(screen | grep -E '^ *tokens +[0-9]+ tokens'); sleep 0.5; b=$(screen | grep -E '^ *tokens +[0-9]+ tokens')
[ "$a" != "$b" ] || fail "the stats page is not live: $a"
t send-keys -l "/help"; t send-keys Enter
wait_gone 'Statistics .* F1/Esc closes' 30 || fail "typing did not close the stats page"
wait_for 'Help .* F1/Esc closes' 30 || fail "/help while generating did not open the help page"
t send-keys Escape
wait_gone 'F1/Esc closes' 30 || fail "Esc did not close /help's page"
t send-keys C-c
ready 100 || fail "Ctrl-C did not stop"
# wide: keys on the left, commands and the legend on the right
quit
start 160 40
run chat $SOURCE
ready || fail "chat did not start at 160x40"
t send-keys F1
wait_for '^ Keys +Commands' 30 || fail "no two columns at 160 columns"
t send-keys F1
wait_gone 'F1/Esc closes' 30 || fail "F1 did not close"
quit
echo ok
