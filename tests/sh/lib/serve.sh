# serve.sh — shared by the `remora serve` tests (sourced, not run): start
# the real server on a free loopback port (--port 0; the port is read from
# its start-up line), stop it, post requests with curl, sum up an event
# stream, and the reference a reply must equal: the same messages through
# `remora run --chat`. Every wait is bounded; callers stop the server from
# their EXIT trap (serve_stop). Needs $T (a scratch folder) and $BIN;
# sourcing it checks that the fixtures and curl are there.

[ -d "${FX:-}/k3-tiny" ] || { echo "fixtures missing: ${FX:-}"; exit 1; }
command -v curl > /dev/null || { echo "curl is not installed (make test installs it)"; exit 1; }

# serve_start BIN MODEL [OPTIONS...]: sets SRV_PID, SRV_PORT, SRV_URL (the
# API's base, .../v1) and SRV_LOG; waits up to 60 s for "ready". An empty
# MODEL starts it without --model (the default model).
serve_start() {
  bin=$1; model=$2; shift 2
  SRV_LOG=$T/serve.$(date +%s%N).log
  "$bin" serve ${model:+--model "$model"} --port 0 "$@" > "$SRV_LOG" 2>&1 &
  SRV_PID=$!
  i=0
  while [ $i -lt 600 ]; do
    grep -q "remora serve: ready" "$SRV_LOG" 2>/dev/null && break
    kill -0 $SRV_PID 2>/dev/null || break
    sleep 0.1; i=$((i + 1))
  done
  SRV_PORT=$(sed -n 's/.*listening on http:.*:\([0-9]*\)\/v1.*/\1/p' "$SRV_LOG" | head -1)
  SRV_URL=http://127.0.0.1:$SRV_PORT/v1
  grep -q "remora serve: ready" "$SRV_LOG" || { echo "the server did not start:"; cat "$SRV_LOG"; return 1; }
}

# serve_stop [SIGNAL]: stops the server (TERM by default), waits up to 20 s;
# SRV_RC gets its exit status; a sanitizer report in its log sets fail=1.
serve_stop() {
  [ -n "${SRV_PID:-}" ] || return 0
  kill -"${1:-TERM}" $SRV_PID 2>/dev/null
  i=0
  while [ $i -lt 200 ] && kill -0 $SRV_PID 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
  kill -0 $SRV_PID 2>/dev/null && { echo "the server did not stop within 20 s"; kill -KILL $SRV_PID; }
  wait $SRV_PID 2>/dev/null; SRV_RC=$?
  SRV_PID=
  # a sanitizer build says what it found in the log: that fails the test
  if grep -q "Sanitizer\|runtime error:" "$SRV_LOG" 2>/dev/null; then
    echo "FAIL the server's log has a sanitizer report:"; grep -A15 "Sanitizer\|runtime error:" "$SRV_LOG" | head -30
    fail=1
  fi
}

# rss_kb PID: resident set size in kB.
rss_kb() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$1/status; }

# post PATH JSON [CURL OPTIONS...]: the response body on stdout, the status
# in $T/status.
post() {
  p=$1; body=$2; shift 2
  curl -s --max-time 120 -o "$T/body" -w '%{http_code}' "$@" "$SRV_URL$p" -H 'Content-Type: application/json' \
    --data-binary "$body" > "$T/status"
  cat "$T/body"
}

# js EXPR: EXPR evaluated on the JSON of stdin (as j) by python3, printed.
js() { python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"; }

# run_ref MODEL PROMPT MAX [TRANSCRIPT]: `remora run --chat` on the same
# conversation (continued from TRANSCRIPT when given, which is extended);
# writes $T/ref.json: {"reasoning", "content", "ids"}.
run_ref() {
  tr=${4:-$T/ref.transcript}
  [ -n "${4:-}" ] || rm -f "$tr"
  "$BIN" run --model "$1" --chat --prompt "$2" --max-new "$3" --transcript "$tr" --trace "$T/ref.trace" \
    > /dev/null 2> "$T/ref.err" || { echo "remora run failed:"; cat "$T/ref.err"; return 1; }
  python3 - "$tr" "$T/ref.trace" > "$T/ref.json" <<'PY'
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
a = msgs[-1]
ids = [r['id'] for r in recs if r.get('kind') == 'token']
print(json.dumps({'reasoning': a.get('reasoning_content') or '', 'content': a['content'], 'ids': ids}))
PY
}

# sse FILE: a stream as curl -N saved it, summed up as JSON on stdout:
# {"reasoning", "content", "text", "finish", "usage", "ids", "chunks",
# "keepalives", "done", "errors", "kinds", "records", "bad", and with the
# stats extension the indices of the first token with answer text and the
# last with reasoning text}; every data line must be JSON, and nothing may
# follow [DONE] (else "bad" says so).
sse() {
  python3 - "$1" <<'PY'
import json, sys
out = {'reasoning': '', 'content': '', 'text': '', 'finish': None, 'usage': None, 'ids': [], 'chunks': 0,
       'keepalives': 0, 'done': False, 'errors': [], 'kinds': {}, 'records': [], 'bad': [],
       'first_answer': None, 'last_reasoning': None}
for line in open(sys.argv[1], encoding='utf-8').read().split('\n'):
    if not line:
        continue
    if out['done']:
        out['bad'].append('after [DONE]: ' + line[:60])
    if line.startswith(':'):
        out['keepalives'] += 1
        continue
    if not line.startswith('data: '):
        out['bad'].append(line[:80])
        continue
    d = line[6:]
    if d == '[DONE]':
        out['done'] = True
        continue
    c = json.loads(d)
    out['chunks'] += 1
    if 'error' in c:
        out['errors'].append(c['error'])
        continue
    r = c.get('remora')
    if r:
        out['kinds'][r['kind']] = out['kinds'].get(r['kind'], 0) + 1
        out['records'].append(r)
        if r['kind'] == 'token':
            out['ids'].append(r['token_id'])
    if c.get('usage'):
        out['usage'] = c['usage']
    for ch in c.get('choices', []):
        dl = ch.get('delta', {})
        out['reasoning'] += dl.get('reasoning_content') or ''
        out['content'] += dl.get('content') or ''
        if r and r['kind'] == 'token':      # the token's own text
            if dl.get('content') and out['first_answer'] is None:
                out['first_answer'] = len(out['ids']) - 1
            if dl.get('reasoning_content'):
                out['last_reasoning'] = len(out['ids']) - 1
        out['text'] += ch.get('text') or ''
        if ch.get('finish_reason'):
            out['finish'] = ch['finish_reason']
print(json.dumps(out))
PY
}

# expect NAME EXPR: a check, EXPR a Python expression in which L('x') is
# the JSON of $T/x.json; prints "ok   NAME" or "FAIL NAME" (and sets fail).
expect() {
  if python3 -c "import json, sys
def L(n): return json.load(open('$T/' + n + '.json'))
sys.exit(0 if ($2) else 1)" 2> "$T/expect.err"; then
    echo "ok   $1"
  else
    echo "FAIL $1"; sed 's/^/     /' "$T/expect.err" | tail -5; fail=1
  fi
}
