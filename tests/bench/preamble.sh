#!/bin/sh
# An agent's long preamble on `remora serve` (issue #27's figures; it
# judges nothing): time to the first text of a streamed reply for a
# request with a ~N-token system prompt, cold (a fresh server and prefix
# cache) and warm (the same preamble, another user message, next), on the
# OpenAI and the Anthropic API, ROUNDS rounds with the APIs interleaved;
# medians and the warm/cold ratio. The prefix cache is on (a temporary
# folder): the warm request restores the preamble the first one captured.
#
# usage: sh tests/bench/preamble.sh [MODEL_DIR] [TOKENS] [ROUNDS]
set -eu
M=${1:-assets/model}; N=${2:-10000}; ROUNDS=${3:-3}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
SRV=
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
python3 - "$BIN" "$M" "$N" "$ROUNDS" "$T" <<'PY'
import http.client, json, os, re, statistics, subprocess, sys, time
binp, model, n, rounds, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]

def preamble(tokens):
    # tool-catalogue-like text; its token count is measured, then it is cut to size
    lines = ["Tool %d: `tool_%d(path, mode)` reads the file at path in mode %d and returns its lines; "
             "errors name the file and the fault." % (i, i, i % 7) for i in range(4000)]
    return "You are a coding agent.\n" + "\n".join(lines)

def start(cache):
    env = dict(os.environ, REMORA_PREFIX_CACHE_GB="8", XDG_CACHE_HOME=cache)
    log = open(os.path.join(tmp, "serve.log"), "w")
    p = subprocess.Popen([binp, "serve", "--model", model, "--port", "0", "--max-tokens", "100000"], stdout=log,
                         stderr=subprocess.STDOUT, env=env)
    for _ in range(600):
        t = open(os.path.join(tmp, "serve.log")).read()
        if "remora serve: ready" in t: break
        time.sleep(0.1)
    port = int(re.search(r"listening on http://[^:]+:(\d+)/v1", t).group(1))
    return p, port

def ttft(port, api, system, question):
    if api == "openai":
        path, body = "/v1/chat/completions", {"stream": True, "max_tokens": 4, "messages": [
            {"role": "system", "content": system}, {"role": "user", "content": question}]}
    else:
        path, body = "/v1/messages", {"model": "m", "stream": True, "max_tokens": 4, "system": system,
                                      "messages": [{"role": "user", "content": question}]}
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    t0 = time.time()
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    first = None
    for line in r:
        line = line.decode()
        if first is None and ('"content":"' in line and '"content":""' not in line or "reasoning_content" in line
                              or "thinking_delta" in line or "text_delta" in line):
            first = time.time() - t0
    c.close()
    return first

# size the preamble to about n tokens with the server's own count
p, port = start(os.path.join(tmp, "c0"))
text = preamble(n)
def count(s):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    c.request("POST", "/v1/messages/count_tokens", json.dumps({"model": "m", "system": s, "messages": [
        {"role": "user", "content": "x"}]}), {"Content-Type": "application/json"})
    return json.loads(c.getresponse().read())["input_tokens"]
total = count(text)
text = text[: int(len(text) * n / total)]
print("preamble: %d tokens (%s)" % (count(text), model))
p.terminate(); p.wait()
res = {"openai": ([], []), "anthropic": ([], [])}
for rnd in range(rounds):
    for api in ("openai", "anthropic"):
        p, port = start(os.path.join(tmp, "c%d%s" % (rnd, api)))
        cold = ttft(port, api, text, "Which tool reads a file?")
        warm = ttft(port, api, text, "Which tool returns lines?")
        p.terminate(); p.wait()
        res[api][0].append(cold); res[api][1].append(warm)
        print("round %d %-9s cold %.2f s  warm %.3f s  (%.1f%%)" % (rnd + 1, api, cold, warm, 100 * warm / cold))
for api, (c, w) in res.items():
    mc, mw = statistics.median(c), statistics.median(w)
    print("median %-9s cold %.2f s  warm %.3f s  warm/cold %.1f%%" % (api, mc, mw, 100 * mw / mc))
PY
