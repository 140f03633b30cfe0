#!/bin/sh
# The GPU tests (README "The GPU"), for a machine with an NVIDIA GPU and
# nvcc; `make test` runs none of this (its machines have no GPU) and keeps
# guarding the CPU path.
#
#   sh tests/gpu/run.sh            build with CUDA, then the tests
#   sh tests/gpu/run.sh --bench    ... then the benchmarks too (a few minutes)
#
# Bit-identity, GPU against CPU: the unit tests with every product sent to
# the device (test_gpu's products on every encoding and shape, and every
# model test); `remora logits` (logits and routes of every position) on both
# fixture families and the embedded model for passes of 1, 7, 256 tokens
# and the whole prompt and VRAM budgets of nothing, part and all of the
# spine; 32 greedy tokens with speculation on and off; a conversation
# resumed from a snapshot the CPU wrote. Each comparison is `cmp` of the
# files. Ends with one "N passed, N failed" line.
#
# $REMORA_MODEL names the embedded model's folder (default assets/model;
# skipped with a note when absent, as on a device machine that was sent the
# fixtures only). BUILD_ENV (e.g. "PKG_CONFIG_PATH=...") is passed to make.
# SKIP_UNIT=1 skips the unit tests (a second call that brings the embedded
# model after one that brought the fixtures).
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
EMB=${REMORA_MODEL:-assets/model}
BIN=build/rel/remora
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
step() { echo "== $1 ($(date +%T))"; }

step "build (CUDA=1)"
if ! make -j"$(nproc)" CUDA=1 MODE=rel build/remora unit > "$T/build.log" 2>&1; then
  tail -40 "$T/build.log"; echo "0 passed, 1 failed"; exit 1
fi
grep -E '^nvcc|registers' "$T/build.log" | head -20
"$BIN" bench-kernels --help > /dev/null || { echo "0 passed, 1 failed"; exit 1; }

# Everything to the device: no product is too small, no pass too short.
ALL="REMORA_GPU_MIN_WORK=1 REMORA_GPU_MIN_TOKENS=1"

if [ "${SKIP_UNIT:-0}" = 1 ]; then step "unit tests skipped (SKIP_UNIT=1)"; else
step "unit tests, every product on the GPU"
env $ALL REMORA_FIXTURES="$FX" REMORA_PREFIX_CACHE_GB=0 XDG_CACHE_HOME="$T/cache" REMORA_BIN="$BIN" \
  build/rel/remora-tests > "$T/unit.log" 2>&1
grep -E '^FAIL ' "$T/unit.log"
grep -E '^  ' "$T/unit.log" | head -20
grep -A2 '^PASS gpu_products' "$T/unit.log" | head -3; grep -B3 '^PASS gpu_products' "$T/unit.log" | grep '    ' | head -3
p=$(grep -c '^PASS ' "$T/unit.log"); f=$(grep -c '^FAIL ' "$T/unit.log")
tail -1 "$T/unit.log"
if grep -q 'skipped: ' "$T/unit.log"; then bad "the GPU was not used: $(grep -m1 'skipped: ' "$T/unit.log")"; fi
pass=$((pass + p)); fail=$((fail + f))
fi

# ids for a model: the goldens' long prompt, else N seeded ids under its vocabulary
ids_for() { # dir n out
  python3 - "$1" "$2" "$3" <<'EOF'
import json, random, sys
d, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
v = json.load(open(d + "/config.json")).get("vocab_size") or json.load(open(d + "/config.json"))["text_config"]["vocab_size"]
r = random.Random(7)
open(out, "w").write(" ".join(str(r.randrange(4, min(v, 60000))) for _ in range(n)) + "\n")
EOF
}

compare_logits() { # name dir
  name=$1 dir=$2
  [ -f "$dir/config.json" ] || { echo "skip $name: no model at $dir"; return; }
  ids_for "$dir" 300 "$T/ids" || { bad "$name: ids"; return; }
  REMORA_GPU=off "$BIN" logits --model "$dir" --ids-file "$T/ids" --out "$T/cpu.f32" --routes "$T/cpu.json" \
    2> "$T/err" || { bad "$name: CPU logits"; cat "$T/err"; return; }
  for cfg in "whole|" "pass 1|--prefill-chunk 1" "pass 7|--prefill-chunk 7" "pass 256|--prefill-chunk 256" \
             "vram none|--vram 0.001" "vram part|--vram 0.004" "vram all|--vram 100"; do
    label=${cfg%%|*} args=${cfg#*|}
    # shellcheck disable=SC2086
    if ! env $ALL "$BIN" logits --model "$dir" --ids-file "$T/ids" --out "$T/gpu.f32" --routes "$T/gpu.json" $args \
         2> "$T/err"; then bad "$name $label: GPU logits"; cat "$T/err"; continue; fi
    if cmp -s "$T/cpu.f32" "$T/gpu.f32" && cmp -s "$T/cpu.json" "$T/gpu.json"; then ok "$name $label: logits and routes equal"
    else bad "$name $label: GPU logits or routes differ from the CPU's"; fi
  done
  # the default policy (small products and short streamed passes on the CPU)
  "$BIN" logits --model "$dir" --ids-file "$T/ids" --out "$T/gpu.f32" --routes "$T/gpu.json" 2> "$T/err"
  if cmp -s "$T/cpu.f32" "$T/gpu.f32" && cmp -s "$T/cpu.json" "$T/gpu.json"; then ok "$name default policy: equal"
  else bad "$name default policy: differs"; fi
}

compare_decode() { # name dir [--chat]
  name=$1 dir=$2; shift 2
  [ -f "$dir/config.json" ] || return
  for spec in on off; do
    REMORA_GPU=off "$BIN" run --model "$dir" --prompt "Tell me about 12 and 30." --max-new 32 --spec $spec "$@" \
      > "$T/cpu.txt" 2> "$T/cpu.err"
    env $ALL "$BIN" run --model "$dir" --prompt "Tell me about 12 and 30." --max-new 32 --spec $spec "$@" \
      > "$T/gpu.txt" 2> "$T/gpu.err"
    if [ -s "$T/cpu.txt" ] && cmp -s "$T/cpu.txt" "$T/gpu.txt"; then ok "$name 32 tokens, spec $spec: equal"
    else bad "$name 32 tokens, spec $spec: differ"; head -c 300 "$T/cpu.txt" "$T/gpu.txt" "$T/gpu.err"; fi
  done
}

compare_resume() { # name dir
  name=$1 dir=$2
  [ -f "$dir/config.json" ] || return
  rm -f "$T"/c*.jsonl "$T"/c*.state
  REMORA_GPU=off "$BIN" run --model "$dir" --transcript "$T/c1.jsonl" --prompt "What is 19*19?" --max-new 24 \
    > /dev/null 2>&1
  cp "$T/c1.jsonl" "$T/c2.jsonl"; cp "$T/c1.state" "$T/c2.state" 2> /dev/null
  REMORA_GPU=off "$BIN" run --model "$dir" --transcript "$T/c1.jsonl" --prompt "And 12+30?" --max-new 24 \
    > "$T/r_cpu.txt" 2> "$T/r_cpu.err"
  env $ALL "$BIN" run --model "$dir" --transcript "$T/c2.jsonl" --prompt "And 12+30?" --max-new 24 \
    > "$T/r_gpu.txt" 2> "$T/r_gpu.err"
  # (two snapshots of the same state need not be the same bytes: two CPU
  # runs' differ too, so the answer and the transcript are compared)
  if [ -f "$T/c2.state" ] && [ -s "$T/r_cpu.txt" ] && cmp -s "$T/r_cpu.txt" "$T/r_gpu.txt" &&
     cmp -s "$T/c1.jsonl" "$T/c2.jsonl" && grep -q 'restored from the snapshot' "$T/r_gpu.err"; then
    ok "$name resumed from the CPU's snapshot: the same answer and transcript"
  else bad "$name resume: differs"; tail -3 "$T/r_gpu.err"; fi
}

step "GPU against CPU through the real binary"
compare_logits k3-tiny "$FX/k3-tiny"
compare_logits kl-tiny "$FX/kl-tiny"
compare_logits embedded "$EMB"
compare_decode k3-tiny "$FX/k3-tiny"
compare_decode kl-tiny "$FX/kl-tiny"
compare_decode embedded "$EMB" --chat
compare_resume embedded "$EMB"     # a chat model: the fixtures' random text does not tokenize back

if [ "${1:-}" = "--bench" ]; then
  step "bench-kernels"
  "$BIN" bench-kernels --seconds 0.5 2>&1 | tail -25
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
