#!/bin/sh
# `remora serve` over 500 sequential requests on one keep-alive connection
# (chat whole and streamed with the stats extension, completions, and a
# refused request now and then), on the release build and the ASan+UBSan
# build: every request answered, no growth of the resident set between
# request 100 and request 500, and no sanitizer report, leaks included, when
# the server exits on SIGTERM with status 0.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
M=$FX/k3-tiny
T=$(mktemp -d); trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
fail=0

for mode in rel asan; do
  BIN=build/$mode/remora
  [ -x "$BIN" ] || { echo "FAIL $BIN is not built (make MODE=$mode unit)"; fail=1; continue; }
  # a small quarantine, so that freed memory held by ASan does not read as growth
  ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=4:exitcode=23 UBSAN_OPTIONS=print_stacktrace=1 \
    serve_start "$BIN" "$M" || { fail=1; continue; }
  python3 - "$SRV_PORT" "$SRV_PID" > "$T/soak.$mode" <<'PY'
import http.client, json, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
def rss():
    for line in open('/proc/%s/status' % pid):
        if line.startswith('VmRSS:'):
            return int(line.split()[1])
bodies = [
    ('/v1/chat/completions', {'messages': [{'role': 'user', 'content': 'hi there'}], 'max_tokens': 2}, 200),
    ('/v1/chat/completions', {'messages': [{'role': 'user', 'content': 'hello'}], 'max_tokens': 2, 'stream': True,
                              'stream_options': {'include_usage': True}, 'remora': {'stats': True}}, 200),
    ('/v1/completions', {'prompt': 'The quick brown fox', 'max_tokens': 2}, 200),
    ('/v1/completions', {'prompt': [1, 2, 3], 'max_tokens': 2, 'stream': True}, 200),
    ('/v1/chat/completions', {'messages': [], 'max_tokens': 2}, 400),
]
c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
marks, bad, t0 = {}, 0, time.time()
for i in range(500):
    path, body, want = bodies[i % len(bodies)]
    c.request('POST', path, json.dumps(body), {'Content-Type': 'application/json'})
    r = c.getresponse()
    data = r.read()
    if r.status != want or (want == 200 and b'"usage"' not in data and b'[DONE]' not in data):
        bad += 1
    if i + 1 in (100, 500):
        marks[i + 1] = rss()
print(json.dumps({'bad': bad, 'rss100': marks[100], 'rss500': marks[500], 'seconds': time.time() - t0}))
PY
  serve_stop TERM
  r=$(cat "$T/soak.$mode")
  grow=$(echo "$r" | js "j['rss500'] - j['rss100']")
  # a few pages of slack for allocator bookkeeping; a leak of one reply per
  # request would be hundreds of kB
  limit=$([ $mode = asan ] && echo 2048 || echo 512)
  if [ "$(echo "$r" | js "j['bad']")" = 0 ] && [ "$grow" -le $limit ] && [ "$SRV_RC" = 0 ] &&
     ! grep -q "Sanitizer\|runtime error" "$SRV_LOG"; then
    echo "ok   $mode: 500 requests in $(echo "$r" | js "'%.0f' % j['seconds']") s, RSS $(echo "$r" | js "j['rss100']") kB at 100, $grow kB more at 500, clean exit"
  else
    echo "FAIL $mode: $r, exit $SRV_RC"; grep -A20 "Sanitizer\|runtime error" "$SRV_LOG" | head -40; fail=1
  fi
done
exit $fail
