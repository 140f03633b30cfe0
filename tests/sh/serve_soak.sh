#!/bin/sh
# `remora serve` over many sequential requests on one keep-alive connection
# (chat whole and streamed with the stats extension, completions, and a
# refused request now and then), on the release build and the ASan+UBSan
# build: every request answered, no growth of the resident set after a
# warm-up of 100 requests, and no sanitizer report, leaks included, when
# the server exits on SIGTERM with status 0.
#
# Growth is judged as a slope, so that it holds on a loaded machine: the
# RSS is sampled every 10 requests after the warm-up and the slope is the
# median of the slopes between every pair of samples (Theil-Sen), which a
# one-off step (an arena or a size class mapped once) does not move but
# memory kept per request does, at every pair. The limits:
# - release (glibc, the users' allocator): flat to the page from request
#   100 to 1000 at a load average of 8.5 on 2 cores (0.017 kB per request
#   over 100..500 in another run: two pages), so the slope must stay under
#   0.25 kB per request (a reply kept per request, a few hundred bytes with
#   its JSON, is over it) and the whole growth under 512 kB;
# - ASan: the sanitizer's allocator, not ours, sets the RSS: freed memory
#   cycles through a 4 MB quarantine and spreads over its size classes,
#   and its periodic release to the OS swung the samples by -1.7 to +2.8 MB
#   with the load (3644 kB once failed the old 2048 kB limit on the two
#   marks 100 and 500). Release is turned off here, which makes the RSS
#   monotone; it then rose 1.4 MB from request 100 to 300 at a load of 9,
#   flattening. The limit is twice the quarantine, 8 MB: a buffer of the
#   size of the logits kept per request (16 kB) would pass it in 200
#   requests; the slope is reported, not judged. Leaks themselves are
#   LeakSanitizer's verdict at exit.
# Request counts: release 500 (0.05-0.16 s each), ASan 300 (0.15-0.3 s):
# each body is sent 60 times or more after the warm-up under ASan.
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
  if [ $mode = asan ]; then n=300 slope=1000000 grow=8192; else n=500 slope=0.25 grow=512; fi
  ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=4:allocator_release_to_os_interval_ms=-1:exitcode=23 \
  UBSAN_OPTIONS=print_stacktrace=1 serve_start "$BIN" "$M" || { fail=1; continue; }
  python3 - "$SRV_PORT" "$SRV_PID" "$n" > "$T/soak.$mode" <<'PY'
import http.client, json, statistics, sys, time
port, pid, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
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
samples, bad, t0 = [], 0, time.time()
for i in range(n):
    path, body, want = bodies[i % len(bodies)]
    c.request('POST', path, json.dumps(body), {'Content-Type': 'application/json'})
    r = c.getresponse()
    data = r.read()
    if r.status != want or (want == 200 and b'"usage"' not in data and b'[DONE]' not in data):
        bad += 1
    if i + 1 >= 100 and (i + 1) % 10 == 0:
        samples.append((i + 1, rss()))
slopes = [(b[1] - a[1]) / (b[0] - a[0]) for k, a in enumerate(samples) for b in samples[k + 1:]]
print(json.dumps({'bad': bad, 'n': n, 'rss100': samples[0][1], 'grow': samples[-1][1] - samples[0][1],
                  'slope': statistics.median(slopes), 'seconds': time.time() - t0}))
PY
  serve_stop TERM
  r=$(cat "$T/soak.$mode")
  if [ "$(echo "$r" | js "j['bad'] == 0 and j['slope'] <= $slope and j['grow'] <= $grow")" = True ] &&
     [ "$SRV_RC" = 0 ] && ! grep -q "Sanitizer\|runtime error" "$SRV_LOG"; then
    echo "ok   $mode: $n requests in $(echo "$r" | js "'%.0f' % j['seconds']") s, RSS $(echo "$r" | js "j['rss100']") kB at 100, $(echo "$r" | js "j['grow']") kB more at $n, slope $(echo "$r" | js "'%.3f' % j['slope']") kB/request, clean exit"
  else
    echo "FAIL $mode: $r (limits: slope $slope kB/request, growth $grow kB), exit $SRV_RC"
    grep -A20 "Sanitizer\|runtime error" "$SRV_LOG" | head -40; fail=1
  fi
done
exit $fail
