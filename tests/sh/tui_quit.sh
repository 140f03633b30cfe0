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
screen | grep -q '^ remora ' || fail "the first Ctrl-D quit"
t send-keys C-d
wait_for '^rc=0' 30 || fail "the second Ctrl-D did not quit"
[ "$(alt)" = 0 ] || fail "alternate screen still on after Ctrl-D"
t send-keys -l "clear; $BIN chat $SOURCE; echo rc=\$?"; t send-keys Enter
ready || fail "chat did not start again"
p=$(chat_pid); [ -n "$p" ] || fail "no chat process"
kill -TERM "$p"
wait_for '^rc=143' 30 || fail "SIGTERM did not exit 143"
[ "$(alt)" = 0 ] || fail "alternate screen still on after SIGTERM"
t send-keys -l "clear; $BIN chat $SOURCE; echo rc=\$?"; t send-keys Enter
ready || fail "chat did not start a third time"
p=$(chat_pid); [ -n "$p" ] || fail "no chat process"
kill -HUP "$p"
wait_for '^rc=129' 30 || fail "SIGHUP did not exit 129"
t send-keys -l "stty -a | grep -o ' icanon\| echo ' | tr -d ' ' | tr '\n' ,; echo"; t send-keys Enter
wait_for '^icanon,echo,' 30 || fail "terminal modes not restored after SIGHUP"
echo ok
