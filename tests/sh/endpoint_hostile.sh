#!/bin/sh
# `remora run --endpoint` against a hostile OpenAI-compatible server
# (tests/sh/lib/hostile_server.py, loopback):
#   - an endless stream is cut at --max-new chunks of text (finish length,
#     exit 0) with memory flat; without --max-new it ends at the overall
#     deadline (24 times --endpoint-timeout), said, exit 1, the text so far
#     kept (memory flat there too);
#   - a stream longer than --max-new is cut there;
#   - one SSE line of 80 MB that never ends is refused at the 64 MB cap;
#   - on a terminal (recorded with script(1)): escape sequences, C1
#     controls, DEL and a bare CR from the server (content, reasoning, the
#     model id, an error message, Retry-After; the chat's start-up error)
#     reach it as visible escapes,
#     never as the bytes; piped to a file, the answer is the server's bytes.
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
python3 tests/sh/lib/hostile_server.py /nonexistent "$T/port" 180 2> "$T/server.err" &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
i=0; while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
U=http://127.0.0.1:$(cat "$T/port")
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
ep() { # MODE ARGS...: run on the endpoint, stdout $T/out, stderr $T/err, peak RSS (kB) in $T/rss
  m=$1; shift
  /usr/bin/time -f %M -o "$T/rss.t" timeout 60 "$BIN" run --endpoint "$U/oa-$m/v1" --prompt hi "$@" > "$T/out" 2> "$T/err"; r=$?; tail -1 "$T/rss.t" > "$T/rss"; return $r
}

ep endless --max-new 200 --no-think
rc=$?
n=$(grep -o 'la ' "$T/out" | wc -l)
[ $rc = 0 ] && [ "$n" = 200 ] && [ "$(cat "$T/rss")" -lt 100000 ] &&
  ok "an endless stream: cut at --max-new 200 chunks, exit 0, peak RSS $(cat "$T/rss") kB" ||
  bad "endless stream with --max-new: exit $rc, $n chunks, $(cat "$T/rss") kB: $(tail -3 "$T/err")"
ep long --max-new 50 --no-think
rc=$?
[ $rc = 0 ] && [ "$(grep -o 'w[0-9]* ' "$T/out" | wc -l)" = 50 ] && ok "a stream past --max-new 50: cut there" ||
  bad "long stream: exit $rc: $(tail -2 "$T/err")"
s=$(date +%s.%N)
ep endless --max-new 1000000000 --endpoint-timeout 0.5 --no-think
rc=$?
secs=$(echo "$(date +%s.%N) - $s" | bc)
[ $rc = 1 ] && grep -q "took longer than 12 s in all (24 times --endpoint-timeout): it was given up; the reply so far is kept" "$T/err" &&
  [ -s "$T/out" ] && [ "$(cat "$T/rss")" -lt 100000 ] &&
  ok "an endless stream without --max-new: given up at the deadline (${secs%???????} s), exit 1, RSS $(cat "$T/rss") kB" ||
  bad "deadline: exit $rc after $secs s: $(tail -2 "$T/err")"
ep bigline --endpoint-timeout 20
rc=$?
[ $rc = 1 ] && grep -q "a line of the stream is larger than 64 MB" "$T/err" && [ "$(cat "$T/rss")" -lt 400000 ] &&
  ok "a 64 MB line: refused at the cap, exit 1, RSS $(cat "$T/rss") kB" || bad "bigline: exit $rc, $(cat "$T/rss") kB: $(tail -2 "$T/err")"

# ---- what reaches a terminal ----------------------------------------------
# check_tty FILE WHAT: the typescript holds no ESC but remora's own SGR
# (dim and reset, ESC [ 2 m / 0 m), no C1, no DEL, no bare CR (script's CR LF aside)
check_tty() {
  python3 - "$1" "$2" <<'PY'
import re, sys
d = open(sys.argv[1], 'rb').read()
body = d.split(b'\n', 1)[1] if d.startswith(b'Script started') else d
body = body.rsplit(b'\nScript done', 1)[0]
stray = re.sub(rb'\x1b\[[02]m', b'', body)
bad = [b for b in stray if b == 0x1b or b == 0x7f or b == 0x07]
c1 = re.findall(rb'\xc2[\x80-\x9f]', stray)
bare_cr = re.findall(rb'\r(?!\n)', stray)
if bad or c1 or bare_cr:
    print('FAIL %s: %d ESC/DEL/BEL, %d C1, %d bare CR reached the terminal: %r' % (sys.argv[2], len(bad), len(c1), len(bare_cr), body[:400]))
    sys.exit(1)
if b'\\x1b[' not in body:
    print('FAIL %s: the escapes are not shown: %r' % (sys.argv[2], body[:400]))
    sys.exit(1)
print('ok   %s: escapes shown as text, none reached the terminal' % sys.argv[2])
PY
}
tty_run() { # FILE MODE ARGS...
  f=$1; m=$2; shift 2
  TERM=xterm timeout 60 script -qec "$BIN run --endpoint $U/oa-$m/v1 --prompt hi $*" "$f" > /dev/null 2>&1
}
tty_run "$T/esc.ts" escape; check_tty "$T/esc.ts" "content, reasoning and the model id" || fail=1
tty_run "$T/err.ts" errescape; check_tty "$T/err.ts" "an error message" || fail=1
tty_run "$T/retry.ts" retry; check_tty "$T/retry.ts" "Retry-After" || fail=1
TERM=xterm timeout 60 script -qec "$BIN chat --endpoint $U/oa-moderr/v1" "$T/chat.ts" > /dev/null 2>&1
check_tty "$T/chat.ts" "the chat's start-up error" || fail=1
ep escape
printf 'answer \033[31mRED\033[0m\033]0;pwned\007\033[6n\302\23331m\177\rOVER end\n' > "$T/want"
cmp -s "$T/out" "$T/want" && ok "piped to a file, the answer is the server's bytes" || bad "piped answer: $(od -c "$T/out" | head -3)"
exit $fail
