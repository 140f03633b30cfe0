#!/bin/sh
# `remora forecast` predicts what `remora bench` then measures: on two
# synthetic K3-width models (2 layers; 16 experts, all cached, and 32, of
# which the budget caches part) at two budgets each (spine resident, and
# spine streamed or experts missing), the predicted decode s/token and
# prefill s/token are within 15% of bench's measurement (median of the
# decode tokens; one prompt of 64 tokens). Each forecast measures the
# machine right before its model's benchmarks; the storage and product
# seconds it predicts are scaled by the ratio of its ceilings to the ones
# bench measures in the same run (the disk and the cores drift). Seconds
# are judged on quiet cores only (a load average below the core count);
# the spine bytes per token always. Then the Kimi K3 forecast
# itself: its JSON has the figures scripts read, its text the machine, the
# GPU line, disk per mode and the ladder. Skipped (and said so) when the
# disk has less than 12 GB free.
#
# The seconds are judged only with REMORA_FORECAST_STRICT=1 (below); without
# it (make test) they are printed, not judged, and the measurements that
# feed nothing else are shorter: forecast --seconds 0.1 instead of 0.5
# (0.3 for the K3 forecasts) and bench --device-seconds 0.1 instead of 0.3
# (their rates only scale the seconds), and bench's prefill is measured on
# the first model's first budget only (its 8-9 CPU-seconds are mostly the
# model's load and the kernel's ceilings, whatever the prompt; unjudged,
# it is there to show that bench's prefill runs at K3 widths and prints
# what the check reads). The plan and the spine
# bytes, judged always, come from the forecast's planner and bench's
# decode, which run at every budget either way. The 16-expert model is the
# one synth.sh checks: under tests/run.sh the two share it (lib/synth.sh).
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=build/rel/remora
. tests/sh/lib/synth.sh
D=$(mktemp -d /var/tmp/remora-forecast-XXXXXX 2>/dev/null || mktemp -d); trap 'rm -rf "$D"' EXIT
for d in "$D" ${REMORA_SYNTH_DIR:+"$REMORA_SYNTH_DIR"}; do
  mkdir -p "$d"; free=$(df -Pk "$d" | awk 'NR==2 {print $4}')
  if [ "$free" -lt 12000000 ]; then echo "skipped: only $((free / 1024)) MB free in $d"; exit 0; fi
done
status=0
PT=64
if [ "${REMORA_FORECAST_STRICT:-}" = 1 ]; then FS=0.5 KS=0.3 DS=0.3 PREFILL=all; else FS=0.1 KS=0.1 DS=0.1 PREFILL=first; fi

# check MODEL BUDGET [first]: bench's decode (and its prefill, on the first
# budget of the first model, $FIRST, or with PREFILL=all) against the
# forecast in $D/f.json
check() {
  $BIN bench --model "$1" --tokens 3 --ram "$2" --device-seconds $DS --json > "$D/bd" 2> "$D/err" || { cat "$D/err"; exit 1; }
  rm -f "$D/bp"
  if [ $PREFILL = all ] || { [ "${3:-}" = first ] && [ "$1" = "$FIRST" ]; }; then
    $BIN bench --model "$1" --prompt-tokens $PT --ram "$2" --device-seconds $DS --json > "$D/bp" 2> "$D/err" ||
      { cat "$D/err"; exit 1; }
  fi
  python3 - "$D/f.json" "$D/bd" "$D/bp" "$2" "$1" <<'PY' || status=1
import json, os, re, sys
f = json.loads(open(sys.argv[1]).read().splitlines()[-1])
text = open(sys.argv[2]).read()
bd = json.loads(text.splitlines()[-1])
bp = json.loads(open(sys.argv[3]).read().splitlines()[-1]) if os.path.exists(sys.argv[3]) else None
ram = float(sys.argv[4])
m = f["machine"]
p = min(f["ladder"], key=lambda x: abs(x["ram_gb"] - ram))
assert p["prefill_passes"] == 1, p
dec = bd["s_per_token"]
# The disk of this host drifts (0.8-1.4 GB/s within minutes) and its cores
# are shared: the forecast's storage seconds are scaled by its disk figures
# over the ones bench measured in the same run as each figure, like for
# like: the expert misses by the random reads of whole experts, the
# streamed spine by the in-order reads in the ring's pieces (bench reads
# the model's spine so when it streams; scaled by the random reads instead,
# the spine-streamed decode was predicted 1.33-1.59x too slow, while the
# ring read at the in-order rate: 2.04 GB/s against 1.96). The products by
# the gemm rates bench_prefill measured right after the prompt: the best
# windows of each (the forecast predicts from its median windows; its
# median over bench's best made the products look 12-28% too fast on a
# loaded machine). The prefill's computing includes the work beside the
# products (prefill_other_s: GLU, KDA recurrence, MLA heads, fresh pages),
# timed on the same cores, and is scaled with them.
kd = m["disk_gbps"] / bd["device_gbps"]
ks = m["spine_gbps"] / bd["spine_gbps"] if bd["spine_gbps"] > 0 else kd
spine_s = p["gb_spine_per_token"] / m["spine_gbps"]
pd = max(spine_s * ks + (p["decode_io_s"] - spine_s) * kd, p["decode_mem_s"])
if bp:
    kp = m["disk_gbps"] / bp["device_gbps"]
    kc = (m["gemm_bf16_best_gflops"] / bp["gemm_bf16_gflops"] +
          m["gemm_expert_best_gflops"] / bp["gemm_expert_gflops"]) / 2
    pp = max(p["prefill_io_s"] * kp, p["prefill_compute_s"] * kc) / p["prompt_tokens"]
# Seconds are judged only on quiet cores: with more runnable work than
# cores, the same decode took 0.83 and 1.40 s/token a minute apart here.
# The plan and the bytes it streams are judged always: the forecast's
# planner must keep what the opened model keeps (bench's "RAM budget" line),
# and the spine read per token must be the streamed units, less what the
# ring read ahead during the prompt for the first token (bench's bytes are
# the mean over its 3 tokens; at 3.25 GB the ring is 2.9 of 3.17 GB).
plan = re.search(r"spine ([0-9.]+) of [0-9.]+ GB resident, expert cache [0-9.]+ GB \((\d+) slots\)", text)
plan_ok = plan and abs(float(plan.group(1)) - p["spine_resident_gb"]) <= 0.02 and int(plan.group(2)) == p["cache_slots"]
load, cores = os.getloadavg()[0], os.cpu_count()
# The seconds fail the test only with REMORA_FORECAST_STRICT=1 on quiet
# cores: at a load of 6-14 on the 2-core development machine single runs'
# ratios ranged 0.48-1.54 (the disk's rate moves 2x within seconds, the
# cores' share as much), and make test must not turn on how busy the
# machine is.
strict = os.environ.get("REMORA_FORECAST_STRICT") == "1"
quiet = load < cores and strict
ok = abs(pd / dec - 1) <= 0.15 and (not bp or abs(pp / bp["prefill_s_per_token"] - 1) <= 0.15)
lo = p["gb_spine_per_token"] - min(p["ring_gb"], p["gb_spine_per_token"]) / bd["tokens"]
spine_ok = lo * 0.95 <= bd["gb_per_token_spine"] <= p["gb_spine_per_token"] * 1.05 + 0.01
verdict = ("ok  " if ok else "FAIL") if quiet else (f"{'within 15%' if ok else 'OUTSIDE 15%'}, not judged "
           f"({'load %.1f on %d cores' % (load, cores) if strict else 'REMORA_FORECAST_STRICT unset'}):")
if bp:
    pre = bp["prefill_s_per_token"]
    prefill = (f"prefill predicted {pp:.4f} measured {pre:.4f} s/token ({pp / pre:.2f}; "
               f"{p['prefill_s'] / p['prompt_tokens'] / pre:.2f} unscaled), gemm x{kc:.2f}")
else:
    prefill = "prefill not measured at this budget (REMORA_FORECAST_STRICT unset)"
print(f"{verdict} {sys.argv[5].split('/')[-1]} --ram {ram}: decode predicted {pd:.3f} measured {dec:.3f} "
      f"s/token ({pd / dec:.2f}; {p['decode_s_per_token'] / dec:.2f} unscaled); {prefill}; spine read "
      f"{p['gb_spine_per_token']:.2f} vs {bd['gb_per_token_spine']:.2f} GB, experts {p['gb_experts_per_token']:.3f} vs "
      f"{bd['gb_per_token_experts']:.3f} GB; disk {m['disk_gbps']:.2f} vs {bd['device_gbps']:.2f} GB/s")
if not spine_ok: print(f"FAIL: the spine read per token is outside [{lo * 0.95:.2f}, {p['gb_spine_per_token'] * 1.05:.2f}] GB")
if not plan_ok: print(f"FAIL: the plan differs: bench {plan.groups() if plan else None}, forecast spine "
                      f"{p['spine_resident_gb']:.2f} GB resident, {p['cache_slots']} slots")
sys.exit(0 if spine_ok and plan_ok and (ok or not quiet) else 1)
PY
}

# model EXPERTS BUDGET BUDGET: the forecast (the probe in the model's
# folder, its default --dir) and both checks
model() {
  synth_model $BIN "$D" 2 "$1" || exit 1
  FIRST=${FIRST:-$SYNTH}
  $BIN forecast --model "$SYNTH" --budgets "$2,$3" --prompt-tokens $PT --seconds $FS --json > "$D/f.json" 2> "$D/err" ||
    { cat "$D/err" "$D/f.json"; exit 1; }
  check "$SYNTH" "$2" first
  check "$SYNTH" "$3"
  ls -a "$SYNTH" | grep -q 'remora-forecast' && { echo "FAIL: the probe file was left"; ls -a "$SYNTH"; status=1; }
  # a model of this script's own goes now (disk); a shared one at the run's end
  [ -n "${REMORA_SYNTH_DIR:-}" ] || rm -rf "$SYNTH"
}
# 32 experts: 3.75 GB holds the spine and 32 slots, 3.62 GB 24 of them
# (first; under tests/run.sh synth.sh runs after this script, in its lane)
model 32 3.75 3.62
# 16 experts: 4.2 GB holds the spine and every expert; at 3.25 GB the
# planner streams the spine (a ring of twice the dense layer's 1.45 GB)
model 16 4.2 3.25

# Kimi K3 as a new user asks: its text, and the JSON at its end (one run);
# Kimi-Linear's below takes the default budget
$BIN forecast --dir "$D" --ram 16 --seconds $KS --json > "$D/k3.txt" 2> "$D/err" || { cat "$D/err"; exit 1; }
for want in "model Kimi K3: 93 layers" "  GPU: none (" "decode:" "prefill:" "full mode needs" \
            "stream mode" "the spine fits from a budget of" "RAM GB   s/token"; do
  grep -qF "$want" "$D/k3.txt" || { echo "FAIL: the K3 forecast lacks '$want'"; cat "$D/k3.txt"; status=1; }
done
tail -1 "$D/k3.txt" > "$D/k3.json"
python3 - "$D/k3.json" <<'PY' || status=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model"] == "Kimi K3" and abs(d["ram_gb"] - 16) < 1e-6, d
assert d["decode_s_per_token"] > 0 and d["prefill_s_per_1k_tokens"] > 0, d
assert 100 < d["disk_stream_gb"] < 200 and 1400 < d["disk_full_gb"] < 1700, d
assert [x["ram_gb"] for x in d["ladder"]] == [8, 16, 32, 64, 128, 256], d["ladder"]
# more RAM never makes it slower, and the ladder's 256 GB rung holds the spine
s = [x["decode_s_per_token"] for x in d["ladder"]]
assert all(a >= b for a, b in zip(s, s[1:])), s
assert d["ladder"][-1]["spine_all_resident"] and not d["ladder"][0]["spine_all_resident"], d["ladder"]
print(f"K3 forecast: {d['decode_s_per_token']:.1f} s/token, {d['prefill_s_per_1k_tokens']:.0f} s per 1000 prompt tokens at 16 GB")
PY
$BIN forecast --kimi-linear --dir "$D" --seconds $KS --json 2> "$D/err" | tail -1 |
  python3 -c "import json,sys; d=json.load(sys.stdin); assert d['model'].startswith('Kimi-Linear'), d; print('Kimi-Linear forecast:', round(d['decode_s_per_token'], 3), 's/token')" || status=1
# a budget below the minimum is bad input, refused before the machine is measured
$BIN forecast --ram 1 --dir "$D" > /dev/null 2> "$D/err"; rc=$?
[ $rc -eq 2 ] && grep -q "below the minimum of Kimi K3" "$D/err" ||
  { echo "FAIL: a budget below K3's minimum exits $rc, not 2, or says other than why"; cat "$D/err"; status=1; }
ls -a "$D" | grep -q 'remora-forecast' && { echo "FAIL: the probe file was left"; ls -a "$D"; status=1; }
exit $status
