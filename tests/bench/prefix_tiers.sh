#!/bin/sh
# The prefix cache's tiers on `remora serve` (issue #27's figures; it
# judges nothing): the same requests with the RAM tier (the default), with
# the disk tier alone (REMORA_PREFIX_RAM_GB=0), with the disk tier alone
# and its files dropped from the page cache before each restore
# (posix_fadvise DONTNEED, as after a K3 pass has streamed its experts
# through the page cache), and with no prefix cache (everything
# recomputed); with REMORA_BIN_OLD, also that binary as it comes (before
# the RAM tier: the disk tier alone). Each round runs them in turn, from
# the next one on (so none always follows the same), each on a fresh server
# and cache. The requests (OpenAI API, one token each, A1's
# two, so the time is about the time to the first token):
#   A1    a conversation with a ~N-token system prompt (cold: computed)
#   B1    another conversation: its request first keeps A's state
#   C1 D1 two more conversations
#   A2    A's second turn after the three others: resumed from A's state
#   E1    a new conversation with A's system prompt: restores its capture
# Prints each round and the medians, with the times the server's log
# gives for keeping A's state (in B1's request) and restoring it (A2).
#
# usage: sh tests/bench/prefix_tiers.sh [MODEL_DIR] [TOKENS] [ROUNDS]
set -eu
M=${1:-assets/model}; N=${2:-4000}; ROUNDS=${3:-3}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$BIN" "$M" "$N" "$ROUNDS" "$T" <<'PY'
import glob, http.client, json, os, re, statistics, subprocess, sys, time
binp, model, n, rounds, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
TIERS = [("ram", {}), ("disk", {"REMORA_PREFIX_RAM_GB": "0"}), ("disk, page cache dropped", {"REMORA_PREFIX_RAM_GB": "0"}),
         ("recompute", {"REMORA_PREFIX_CACHE_GB": "0"})]
REQS = ["A1", "B1", "C1", "D1", "A2", "E1"]
old = os.environ.get("REMORA_BIN_OLD")
if old: TIERS.append(("old binary", {"BIN": old}))

def start(cache, extra):
    env = dict(os.environ, REMORA_PREFIX_CACHE_GB="8", XDG_CACHE_HOME=cache)
    env.pop("REMORA_PREFIX_RAM_GB", None)
    env.update(extra)
    logp = os.path.join(tmp, "serve.log")
    log = open(logp, "w")
    p = subprocess.Popen([extra.get("BIN", binp), "serve", "--model", model, "--port", "0", "--max-tokens", "100000"], stdout=log,
                         stderr=subprocess.STDOUT, env=env)
    for _ in range(600):
        t = open(logp).read()
        if "remora serve: ready" in t: break
        time.sleep(0.1)
    return p, int(re.search(r"listening on http://[^:]+:(\d+)/v1", t).group(1)), logp

def post(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    t0 = time.time()
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = json.loads(c.getresponse().read())
    c.close()
    return time.time() - t0, r

def chat(port, messages, tokens=1):
    return post(port, "/v1/chat/completions", {"max_tokens": tokens, "messages": messages})

def drop(cache):
    for f in glob.glob(os.path.join(cache, "remora", "prefix", "*.snap")):
        fd = os.open(f, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)

lines = ["Tool %d: `tool_%d(path, mode)` reads the file at path in mode %d and returns its lines; "
         "errors name the file and the fault." % (i, i, i % 7) for i in range(8000)]
text = "You are a coding agent.\n" + "\n".join(lines)
p, port, _ = start(os.path.join(tmp, "c0"), {})
def count(s):
    return post(port, "/v1/messages/count_tokens", {"model": "m", "system": s, "messages": [
        {"role": "user", "content": "x"}]})[1]["input_tokens"]
text = text[: int(len(text) * n / count(text))]
print("system prompt: %d tokens (%s)" % (count(text), model))
p.terminate(); p.wait()
res = {t: {r: [] for r in REQS} for t, _ in TIERS}
restore = {t: [] for t, _ in TIERS}
keep = {t: [] for t, _ in TIERS}
for rnd in range(rounds):
    for name, extra in TIERS[rnd % len(TIERS):] + TIERS[:rnd % len(TIERS)]:     # each round starts elsewhere
        cache = os.path.join(tmp, "c%d-%d" % (rnd, TIERS.index((name, extra))))
        p, port, logp = start(cache, extra)
        a = [{"role": "system", "content": text}, {"role": "user", "content": "Which tool reads a file?"}]
        got = {}
        got["A1"], r = chat(port, a, 2)     # two: the state goes past the prompt's own entry
        a += [r["choices"][0]["message"], {"role": "user", "content": "And which one returns lines?"}]
        for k, q in (("B1", "Hello"), ("C1", "What is seven and five?"), ("D1", "Name a colour.")):
            got[k], _ = chat(port, [{"role": "system", "content": "You are conversation %s, short and kind." % k},
                                    {"role": "user", "content": q}])
        if "dropped" in name: drop(cache)
        got["A2"], _ = chat(port, a)
        if "dropped" in name: drop(cache)
        got["E1"], _ = chat(port, [{"role": "system", "content": text}, {"role": "user", "content": "Which tool writes?"}])
        p.terminate(); p.wait()
        log = open(logp).read()
        rs = re.findall(r"(\d+) restored from (RAM|disk) in ([0-9.]+) s", log)
        restore[name] += [float(x[2]) for x in rs if int(x[0]) > n // 2]
        ks = re.findall(r"the state before \((\d+) tokens\) kept (in RAM|on disk) in ([0-9.]+) s", log)
        keep[name] += [float(x[2]) for x in ks if int(x[0]) > n // 2]
        for k in REQS: res[name][k].append(got[k])
        print("round %d %-25s " % (rnd + 1, name) + "  ".join("%s %.3f" % (k, got[k]) for k in REQS) +
              "  restores: " + ", ".join("%s tok %s %s s" % x for x in rs))
print("medians (s)              " + "  ".join("%7s" % k for k in REQS) + "  keep, restore of >N/2 tokens")
med = lambda v: "%.4f" % statistics.median(v) if v else "-"
for name, _ in TIERS:
    print("%-25s" % name + "  ".join("%7.3f" % statistics.median(res[name][k]) for k in REQS) +
          "  %s  %s" % (med(keep[name]), med(restore[name])))
PY
