#!/bin/sh
# Peak RSS stays within the RAM budget plus the documented overhead: the
# release binary decodes, and then takes a prompt as long as the largest
# pass the prefill planner picks for the budget (at two budgets), under a
# memory cgroup limited to budget + overhead (when this machine offers
# cgroup v1 memory control, as root), and its own VmHWM must also be within
# that sum.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
[ -d "$FX/k3-tiny" ] || { echo "fixtures missing: $FX"; exit 1; }
BIN=build/rel/remora
RAM=0.004
T=$(mktemp -d); CG=""
cleanup() { [ -n "$CG" ] && rmdir "$CG" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
# the overhead the engine documents for this model
$BIN bench --model "$FX/k3-tiny" --ram $RAM --tokens 1 --device-seconds 0.2 --json > "$T/probe" 2>/dev/null || { echo "probe run failed"; exit 1; }
LIMIT=$(python3 -c "import json;d=json.loads(open('$T/probe').read().splitlines()[-1]);print(int((d['ram_budget_gb']+d['overhead_gb'])*1e9))")
if [ "$(id -u)" = 0 ] && [ -w /sys/fs/cgroup/memory ]; then
  CG=/sys/fs/cgroup/memory/remora-test-$$
  mkdir "$CG" && echo "$LIMIT" > "$CG/memory.limit_in_bytes" || CG=""
fi
if [ -n "$CG" ]; then
  sh -c "echo \$\$ > $CG/cgroup.procs && exec $BIN bench --model '$FX/k3-tiny' --ram $RAM --tokens 24 --device-seconds 0.5 --json" > "$T/out" 2>"$T/err"
else
  echo "note: no cgroup memory control here; checking VmHWM only"
  $BIN bench --model "$FX/k3-tiny" --ram $RAM --tokens 24 --device-seconds 0.5 --json > "$T/out" 2>"$T/err"
fi
rc=$?
[ $rc = 0 ] || { echo "bench failed under the limit (rc=$rc)"; cat "$T/err"; exit 1; }
python3 - "$T/out" "$LIMIT" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
limit = int(sys.argv[2])
peak = d["peak_rss_gb"] * 1e9
print(f"peak RSS {peak/1e6:.1f} MB, budget + overhead {limit/1e6:.1f} MB")
assert peak <= limit, "peak RSS above budget + overhead"
for k in ("s_per_token", "gb_per_token_spine", "gb_per_token_experts", "read_gbps", "device_gbps", "roofline_ratio"):
    assert k in d, k
PY

# the prompt path at the planner's largest pass, at a small and a larger budget
for ram in 0.004 0.05; do
  $BIN bench --model "$FX/k3-tiny" --ram $ram --tokens 1 --device-seconds 0.2 --json > "$T/probe" 2>/dev/null || { echo "probe run failed"; exit 1; }
  read LIMIT CHUNK <<EOF2
$(python3 -c "import json;d=json.loads(open('$T/probe').read().splitlines()[-1]);print(int((d['ram_budget_gb']+d['overhead_gb'])*1e9), d['prefill_chunk'])")
EOF2
  [ -n "$CG" ] && echo "$LIMIT" > "$CG/memory.limit_in_bytes"
  cmd="$BIN bench --model '$FX/k3-tiny' --ram $ram --prompt-tokens $CHUNK --device-seconds 0.2 --json"
  if [ -n "$CG" ]; then sh -c "echo \$\$ > $CG/cgroup.procs && exec $cmd" > "$T/out" 2>"$T/err"
  else sh -c "exec $cmd" > "$T/out" 2>"$T/err"; fi
  [ $? = 0 ] || { echo "prefill of $CHUNK tokens failed under the limit at --ram $ram"; cat "$T/err"; exit 1; }
  python3 - "$T/out" "$LIMIT" "$CHUNK" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
limit, chunk = int(sys.argv[2]), int(sys.argv[3])
peak = d["peak_rss_gb"] * 1e9
print(f"prefill of {chunk} tokens in {d['passes']} pass: peak RSS {peak/1e6:.1f} MB, budget + overhead {limit/1e6:.1f} MB")
assert d["passes"] == 1 and d["chunk_tokens"] == chunk
assert peak <= limit, "peak RSS above budget + overhead"
PY
  [ $? = 0 ] || exit 1
done
