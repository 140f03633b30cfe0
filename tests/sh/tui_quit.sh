#!/bin/sh
# Screen test: the ways out. Ctrl-D while a reply is generated asks once
# ("Ctrl-D again to quit") and the second one quits; SIGTERM exits 143 and
# SIGHUP 129 (as a shell reports them), the terminal restored.
. "$(dirname "$0")/tui_common.inc"
start 120 40
alt() { t display-message -p '#{alternate_on}'; }
chat_pid() { pgrep -P "$(t display-message -p '#{pane_pid}')"; }   # the shell's one child: our chat
t send-keys -l "$BIN chat $SOURCE --synthetic-rate 30; echo rc=\$?"; t send-keys Enter
ready || fail "chat did not start"
send "a long reply" 1
wait_for 'generating' 50 || fail "not generating"
t send-keys C-d
wait_for 'a reply is being generated: Ctrl-D again to quit' 30 || fail "Ctrl-D while generating did not ask"
screen | grep -qE "$STATUS_RE" || fail "the first Ctrl-D quit"
t send-keys C-d
wait_for '^rc=0' 30 || fail "the second Ctrl-D did not quit"
[ "$(alt)" = 0 ] || fail "alternate screen still on after Ctrl-D"
# killed SIGNAL STATUS: a fresh chat ends by the signal with that status
killed() {
  t send-keys -l "clear; $BIN chat $SOURCE; echo rc=\$?"; t send-keys Enter
  ready || fail "chat did not start for SIG$1"
  p=$(chat_pid); [ -n "$p" ] || fail "no chat process"
  kill -"$1" "$p"
  wait_for "^rc=$2" 30 || fail "SIG$1 did not exit $2"
  [ "$(alt)" = 0 ] || fail "alternate screen still on after SIG$1"
}
killed TERM 143
killed HUP 129
t send-keys -l "stty -a | grep -o ' icanon\| echo ' | tr -d ' ' | tr '\n' ,; echo"; t send-keys Enter
wait_for '^icanon,echo,' 30 || fail "terminal modes not restored after SIGHUP"
echo ok
