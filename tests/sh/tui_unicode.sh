#!/bin/sh
# Screen test: CJK, combining marks and emoji (in the prompt and in the
# streamed text) keep the columns aligned: the rule between the panes stays
# at one display column on every row. Emoji sequences terminals draw at
# different widths (ZWJ, skin tones, VS16) are one marker each, in the panes
# and in the input line, whose cursor steps over them as one character.
. "$(dirname "$0")/tui_common.inc"
start 100 30
run chat $SOURCE --synthetic-rate 400
ready || fail "chat did not start"
send "漢字かな 😀 🎉 café naïve 한국어 🇬🇧 ❤️ and more text to wrap around the pane" 1
ready 300 || fail "the turn did not end"
if [ $SYNTHETIC = 1 ]; then
  screen | grep -q "漢字かな交じり文" || fail "CJK answer text not shown"
  screen | grep -q "😀" || fail "emoji not shown"
fi
aligned || fail "columns not aligned"
if [ $SYNTHETIC = 1 ]; then
  # ZWJ sequences, skin tones and VS16 on a narrow base: one visible marker
  # each, never their first code point alone
  screen | grep -q 'Emoji: 〓 🫶 � 🚀 🇬🇧 〓\.' || fail "emoji sequences not drawn as markers"
fi
# the input line draws them the same way, and its cursor agrees
t send-keys -l "a👩‍💻b❤️c"
wait_for '^> a〓b�c' 30 || fail "input line does not show the markers"
cursor_at 8 || fail "input cursor at $(t display-message -p '#{cursor_x}'), wanted 8"
t send-keys Left Left
cursor_at 6 || fail "cursor did not step over the marker as one character"
t send-keys Left Left Right
cursor_at 5 || fail "cursor did not step over the marker as one character"
t send-keys C-e C-u
# scroll a pane to its start: other rows, other text (a random fixture model
# writes only reasoning, so it is that pane there)
pane=Answer
[ $SYNTHETIC = 1 ] || { pane=Reasoning; t send-keys Tab; }
t send-keys M-Home
wait_for "$pane  \\[" 30 || fail "Alt-Home did not scroll"
screen | grep -q "漢字かな 😀" || fail "CJK prompt not shown"
aligned || fail "columns not aligned after scrolling"
t send-keys M-End
wait_gone "$pane  \\[" 30 || fail "Alt-End did not return to the tail"
quit
echo ok
