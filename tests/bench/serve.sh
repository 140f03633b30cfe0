#!/bin/sh
# `remora serve` against `remora run` (issue #18's benchmark; it judges
# nothing and takes minutes):
#   - decode tokens/s as a client sees them, through the server (a streamed
#     reply) and from `remora run` (its stdout and stderr), on the same
#     prompts, paired and interleaved (run, server, run, server, ...), each
#     pair's ratio, the median of ROUNDS rounds per prompt; both greedy with
#     --spec off, so both generate the same tokens at a steady pace. The
#     rate is (tokens - 1) over the time from the first text to the end of
#     the reply;
#   - time to the first byte of a streamed reply and to its first text;
#   - reuse on a 5-turn conversation that resends its history: prompt and
#     cached tokens per turn, and the time to the first text with the state
#     reused against the same conversation sent again (computed whole).
#
# usage: sh tests/bench/serve.sh MODEL_DIR [chat|completion] [ROUNDS]
#   chat: chat prompts (the embedded model ends its messages by itself);
#   completion: a raw completion of 300 tokens (the random fixtures).
set -eu
M=${1:?usage: serve.sh MODEL_DIR [chat|completion] [ROUNDS]}
KIND=${2:-chat}; ROUNDS=${3:-3}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
SRV=
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
"$BIN" serve --model "$M" --port 0 --spec off --max-tokens 100000 > "$T/serve.log" 2>&1 &
SRV=$!
i=0; while [ $i -lt 600 ] && ! grep -q "remora serve: ready" "$T/serve.log" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
PORT=$(sed -n 's/.*listening on http:.*:\([0-9]*\)\/v1.*/\1/p' "$T/serve.log")
python3 - "$BIN" "$M" "$KIND" "$ROUNDS" "$PORT" <<'PY'
import http.client, json, os, selectors, statistics, subprocess, sys, time
BIN, M, KIND, ROUNDS, PORT = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
if KIND == 'chat':
    prompts = ["What is 123456789 * 987654321?",
               "Sort these numbers: 93 12 45 67 23 89 34 76 11 58 99 3 41 72 18 64 27 85 50 6",
               "What is 98765 + 12345 + 55555?"]
    MAX = 400
else:
    prompts = ["The quick brown fox", "Once upon a time", "hello"]
    MAX = 300

def run_once(p):
    """remora run: (tokens, seconds from the first text to the end of the reply)."""
    args = [BIN, 'run', '--model', M, '--prompt', p, '--max-new', str(MAX), '--spec', 'off']
    if KIND == 'chat':
        args.append('--chat')
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    sel.register(proc.stderr, selectors.EVENT_READ)
    first = last = None
    err = b''
    open_ = 2
    while open_:
        for key, _ in sel.select():
            data = os.read(key.fileobj.fileno(), 65536)
            if not data:
                sel.unregister(key.fileobj)
                open_ -= 1
                continue
            now = time.monotonic()
            if key.fileobj is proc.stderr:
                err += data
                if b'[ctx ' in err:       # the summary, after the reply
                    continue
            if first is None:
                first = now
            last = now
    proc.wait()
    summary = err[err.index(b'[ctx '):].decode()
    n = int(summary.split(' over ')[1].split(' ')[0])
    return n, last - first

def post(body):
    c = http.client.HTTPConnection('127.0.0.1', PORT, timeout=600)
    t0 = time.monotonic()
    c.request('POST', '/v1/chat/completions' if KIND == 'chat' or 'messages' in body else '/v1/completions',
              json.dumps(body), {'Content-Type': 'application/json'})
    r = c.getresponse()
    t_head = time.monotonic()
    first = last = None
    usage = None
    while True:
        line = r.fp.readline()
        if not line:
            break
        now = time.monotonic()
        if not line.startswith(b'data: ') or line.startswith(b'data: [DONE]'):
            continue
        ch = json.loads(line[6:])
        if ch.get('usage'):
            usage = ch['usage']
        for c0 in ch.get('choices', []):
            d = c0.get('delta', {})
            if d.get('content') or d.get('reasoning_content') or c0.get('text'):
                if first is None:
                    first = now
                last = now
            if c0.get('finish_reason'):
                last = now
    c.close()
    return {'ttfb': t_head - t0, 'ttft': first - t0, 'decode': last - first, 'usage': usage}

def serve_once(p, n):
    body = {'max_tokens': MAX, 'stream': True, 'stream_options': {'include_usage': True}}
    if KIND == 'chat':
        body['messages'] = [{'role': 'user', 'content': p}]
    else:
        body['prompt'] = p
    r = post(body)
    return n, r['decode'], r

print(f"model {M}, {KIND}, {ROUNDS} rounds, greedy, --spec off")
print(f"{'prompt':42s} {'tokens':>6s} {'run tok/s':>10s} {'serve tok/s':>12s} {'ratio':>7s}")
ratios_all = []
ttfb, ttft = [], []
for p in prompts:
    rr, ss, ra = [], [], []
    for k in range(ROUNDS):
        n, dt = run_once(p)
        n2, dt2, info = serve_once(p, n)
        rr.append((n - 1) / dt)
        ss.append((n - 1) / dt2)
        ra.append(ss[-1] / rr[-1])
        ttfb.append(info['ttfb'])
        ttft.append(info['ttft'])
    ratios_all += ra
    print(f"{p[:42]:42s} {n:6d} {statistics.median(rr):10.1f} {statistics.median(ss):12.1f} "
          f"{statistics.median(ra):7.3f}")
print(f"median ratio serve/run over all pairs: {statistics.median(ratios_all):.3f} "
      f"(min {min(ratios_all):.3f}, max {max(ratios_all):.3f})")
print(f"time to the first byte of a stream: median {statistics.median(ttfb) * 1000:.1f} ms; "
      f"to its first text: median {statistics.median(ttft) * 1000:.1f} ms (a fresh prompt)")

# ---- reuse over a 5-turn conversation
if KIND == 'chat':
    turns = ["What is 12+7?", "And 3+4?", "What is 25*4?", "Sort: 5 3 9 1", "What is 1000-1?"]
    msgs = []
    print(f"{'turn':>4s} {'prompt':>7s} {'cached':>7s} {'first text, reused':>19s} {'sent again, whole':>18s}")
    tot_p = tot_c = 0
    for i, u in enumerate(turns):
        msgs.append({'role': 'user', 'content': u})
        body = {'messages': msgs, 'max_tokens': MAX, 'stream': True, 'stream_options': {'include_usage': True},
                'remora': {'stats': False}}
        # the reply's text, to send back: a whole request after the stream
        r = post(body)
        again = post(body)                 # the same prompt: nothing to extend, computed whole
        c = http.client.HTTPConnection('127.0.0.1', PORT, timeout=600)
        whole = dict(body, stream=False)
        c.request('POST', '/v1/chat/completions', json.dumps(whole), {'Content-Type': 'application/json'})
        w = json.loads(c.getresponse().read())
        m = w['choices'][0]['message']
        msgs.append({'role': 'assistant', 'content': m['content'], 'reasoning_content': m.get('reasoning_content', '')})
        u0 = r['usage']
        tot_p += u0['prompt_tokens']
        tot_c += u0['prompt_tokens_details']['cached_tokens']
        print(f"{i + 1:4d} {u0['prompt_tokens']:7d} {u0['prompt_tokens_details']['cached_tokens']:7d} "
              f"{r['ttft'] * 1000:16.1f} ms {again['ttft'] * 1000:15.1f} ms")
    print(f"reused {tot_c} of {tot_p} prompt tokens over 5 turns ({100.0 * tot_c / tot_p:.0f}%)")
PY
