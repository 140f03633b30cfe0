#!/bin/sh
# `remora serve` against hostile raw-socket clients (tests/sh/lib/hostile.py,
# Python's standard library):
#   - request smuggling (RFC 9112): two Content-Length headers that differ,
#     one beside a Transfer-Encoding: 400 and nothing of the body answered;
#     a Content-Length that is not a number: the connection closed without
#     a reply (libmicrohttpd 0.9.75's own would have its status line twice);
#     an unknown or non-final Transfer-Encoding: 501 at once, not at the
#     idle time-out;
#   - heads too large: a request target over 8 KiB is 414, a head over
#     32 KiB 431, JSON errors up to 640 KB or 9,600 header lines; past that
#     and for a malformed request line, header line or chunk size,
#     libmicrohttpd's own HTML reply with one status line;
#   - error messages quoting cut or invalid UTF-8 (long multibyte roles and
#     model names, %ff in the path, bad bytes in Host and Origin) are the
#     right status with a valid JSON error, never 500; %00 in the path
#     matches no route (404); tools entries of the wrong type are 400;
#   - the log: a path with %0a and %1b cannot forge a line or hold an
#     escape;
#   - slowloris: headers or a body trickled a byte at a time are cut at
#     --idle-timeout seconds after they began, though bytes keep coming;
#     one address holds at most 16 connections, on loopback too.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
M=$FX/k3-tiny
T=$(mktemp -d); trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
fail=0

serve_start "$BIN" "$M" --idle-timeout 2 --max-connections 40 || exit 1
timeout 120 python3 tests/sh/lib/hostile.py "$SRV_PORT" > "$T/out" 2>&1
rc=$?
cat "$T/out"
[ $rc = 0 ] || { echo "FAIL hostile.py exit $rc"; fail=1; }
grep -q '^FAIL' "$T/out" && fail=1
serve_stop
# the log: every request line is one line, no byte below 0x20 but LF, no DEL
python3 - "$SRV_LOG" <<'PY' || fail=1
import sys
data = open(sys.argv[1], 'rb').read()
bad = [b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f]
forged = [l for l in data.split(b'\n') if l.startswith(b'FORGED')]
if bad or forged:
    print('FAIL the log holds %d control bytes, %d forged lines' % (len(bad), len(forged)))
    sys.exit(1)
if b'/v1/x\\nFORGED' not in data or b'\\x1b[31m' not in data:
    print('FAIL the log does not show the escaped path:', data[-600:])
    sys.exit(1)
print('ok   the log: %0a and %1b in a path are escaped, no line forged')
PY
grep -q "^remora serve: - /v1/chat/completions 0 (connection failed) [0-9.]* s: closed without a reply: a Content-Length that is not a number" "$SRV_LOG" &&
  grep -q "^remora serve: - /v1/models 431 (connection failed) [0-9.]* s: refused by libmicrohttpd" "$SRV_LOG" &&
  grep -q "^remora serve: POST /v1/chat/completions 400 (connection failed) [0-9.]* s: refused by libmicrohttpd" "$SRV_LOG" &&
  echo "ok   the log names a request closed for its Content-Length and one libmicrohttpd refused" ||
  { echo "FAIL no log line for the closed or refused requests"; fail=1; }
grep -q "a connection closed: its request headers took longer than 2 s" "$SRV_LOG" &&
  grep -q "a connection closed: its request body took longer than 2 s" "$SRV_LOG" &&
  echo "ok   the log names the late headers and body" || { echo "FAIL no deadline lines in the log"; fail=1; }
exit $fail
