#!/bin/sh
# `remora run` without --chat on a chat model (the embedded demo model
# answers a plain prompt in chat markup): it says so once on stderr, with
# --chat as the way out, and no markup reaches stdout; with --chat the
# answer comes as usual.
set -u
BIN=build/rel/remora
T=$(mktemp -d) || exit 1; trap 'rm -rf "$T"' EXIT
out=$($BIN run --prompt 'What is 37*12?' --max-new 30 2> "$T/err") || { cat "$T/err"; exit 1; }
case "$out" in *'<|'*) echo "FAIL: chat markup on stdout: $out"; exit 1;; esac
[ "$(grep -c 'it is a chat model: add --chat' "$T/err")" = 1 ] || { echo "FAIL: no single warning:"; cat "$T/err"; exit 1; }
out=$($BIN run --prompt 'What is 37*12?' --chat 2> "$T/err") || { cat "$T/err"; exit 1; }
[ "$out" = 444 ] || { echo "FAIL: --chat answered '$out'"; exit 1; }
grep -q 'chat model' "$T/err" && { echo "FAIL: --chat warned"; cat "$T/err"; exit 1; }
echo "ok: a plain prompt on a chat model warns once and prints no markup; --chat answers 444"
