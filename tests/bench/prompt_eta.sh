#!/bin/sh
# How true a long prompt's progress is (issue #29's figures; it judges
# nothing): one prompt through `remora serve` with the stats extension, and
# for each progress record the share of the work it showed and the end its
# ETA promised, against the prompt's real end; the ETA's error (as a share
# of the prompt's time) at 25, 50 and 75% of that time, and its largest and
# median error past the first 10%. The prefix cache is off, so the prompt
# is computed whole.
#
# usage: sh tests/bench/prompt_eta.sh MODEL_DIR [WORDS] [PASS_TOKENS] [SERVE OPTIONS...]
#   WORDS: words of the prompt ("w0 w1 ...", about 4 tokens each; 450);
#   PASS_TOKENS: --prefill-chunk (256); then e.g. --ram 8.
set -eu
M=${1:?usage: prompt_eta.sh MODEL_DIR [WORDS] [PASS_TOKENS] [SERVE OPTIONS...]}
WORDS=${2:-450}; CHUNK=${3:-256}
shift; [ $# -gt 0 ] && shift; [ $# -gt 0 ] && shift
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
SRV=
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$T"' EXIT
REMORA_PREFIX_CACHE_GB=0 XDG_CACHE_HOME=$T "$BIN" serve --model "$M" --port 0 --prefill-chunk "$CHUNK" "$@" \
  > "$T/serve.log" 2>&1 &
SRV=$!
i=0; while [ $i -lt 6000 ] && ! grep -q "remora serve: ready" "$T/serve.log" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
PORT=$(sed -n 's/.*listening on http:.*:\([0-9]*\)\/v1.*/\1/p' "$T/serve.log")
grep -q "remora serve: ready" "$T/serve.log" || { cat "$T/serve.log"; exit 1; }
python3 - "$PORT" "$WORDS" <<'PY'
import json, statistics, sys, urllib.request
port, words = sys.argv[1], int(sys.argv[2])
body = json.dumps({"prompt": " ".join("w%d" % (i % 97) for i in range(words)), "max_tokens": 1, "stream": True,
                   "remora": {"stats": True}}).encode()
req = urllib.request.Request("http://127.0.0.1:%s/v1/completions" % port, body, {"Content-Type": "application/json"})
recs = []
with urllib.request.urlopen(req, timeout=36000) as r:
    for line in r:
        line = line.decode().strip()
        if line.startswith("data: {"):
            s = json.loads(line[6:]).get("remora")
            if s and s.get("kind") in ("progress", "prompt"): recs.append(s)
end = [s["prompt"] for s in recs if s["kind"] == "prompt"][-1]
T = end["elapsed"]
rows = [(p["elapsed"], p.get("work", 0), p["eta"], p["chunk"], p["layer"]) for p in
        (s["prompt"] for s in recs if s["kind"] == "progress") if p["eta"] >= 0]
print("prompt: %d tokens in %.2f s, %d progress records with an ETA" % (end["total"], T, len(rows)))
for e, w, eta, c, l in rows:
    print("  %7.2f s  pass %2d layer %2d  shown %5.1f%%  time %5.1f%%  ETA %8.2f s  error %+6.1f%%" %
          (e, c + 1, l, 100 * w, 100 * e / T, eta, 100 * (e + eta - T) / T))
for q in (0.25, 0.5, 0.75):
    e, w, eta, c, l = min(rows, key=lambda x: abs(x[0] - q * T))
    print("at %d%% of the time: shown %.1f%%, the ETA's error %+.1f%% of the prompt's time" %
          (100 * q, 100 * w, 100 * (e + eta - T) / T))
late = [abs(e + eta - T) / T for e, w, eta, c, l in rows if e >= 0.1 * T]
print("past 10%% of the time: largest error %.1f%%, median %.1f%%" % (100 * max(late), 100 * statistics.median(late)))
PY
