#!/bin/sh
# `remora synth` writes a K3-format checkpoint at K3 widths that the engine
# loads and runs: the smallest one (2 layers, 16 experts, about 3.6 GB) is
# written, checked for K3's shard naming and expert size, decoded under the
# smallest RAM budget the engine accepts, checked to repeat text it wrote
# (with every draft accepted), and removed; it says its plan before
# writing and the next command after; Ctrl-C in the middle of a shard
# removes that shard's temporary file and exits 130. Skipped (and said so)
# when the disk has less than 10 GB free.
set -u
cd "$(dirname "$0")/../.." || exit 2
BIN=build/rel/remora
. tests/sh/lib/synth.sh
D=$(mktemp -d /var/tmp/remora-synth-XXXXXX 2>/dev/null || mktemp -d); trap 'rm -rf "$D"' EXIT
for d in "$D" ${REMORA_SYNTH_DIR:+"$REMORA_SYNTH_DIR"}; do
  mkdir -p "$d"; free=$(df -Pk "$d" | awk 'NR==2 {print $4}')
  if [ "$free" -lt 10000000 ]; then echo "skipped: only $((free / 1024)) MB free in $d"; exit 0; fi
done
# the model forecast.sh reads too (lib/synth.sh: one per run of tests/run.sh)
synth_model $BIN "$D" 2 16 || exit 1
M=$SYNTH
grep -q "writing 2 layers with 16 experts each (K3 widths) to $M: 3.5 GB" "$SYNTH_ERR" ||
  { echo "no plan before writing:"; cat "$SYNTH_ERR"; exit 1; }
grep -q "next: \`remora forecast --model $M\`" "$SYNTH_ERR" || { echo "no next command:"; cat "$SYNTH_ERR"; exit 1; }
ls "$M" | grep -q '^model-00001-of-000004.safetensors$' || { echo "K3 shard naming missing"; ls "$M"; exit 1; }
# (synth's temporaries are NAME.tmp.PID.TID; forecast.sh's probe,
# .remora-forecast-PID.tmp, may be in a shared model's folder meanwhile)
ls -a "$M" | grep -q '\.tmp\.' && { echo "a temporary file was left"; ls -a "$M"; exit 1; }
python3 - "$M" <<'PY' || exit 1
import json, struct, sys
d = sys.argv[1]
idx = json.load(open(f"{d}/model.safetensors.index.json"))
cfg = json.load(open(f"{d}/config.json"))
assert cfg["model_type"] == "kimi_k3" and cfg["text_config"]["hidden_size"] == 7168
shard = idx["weight_map"]["language_model.model.layers.1.block_sparse_moe.experts.0.w1.weight_packed"]
f = open(f"{d}/{shard}", "rb")
n = struct.unpack("<Q", f.read(8))[0]
h = json.loads(f.read(n))
names = [f"language_model.model.layers.1.block_sparse_moe.experts.0.{w}.{p}" for w in ("w1", "w2", "w3") for p in ("weight_packed", "weight_scale")]
spans = [h[k]["data_offsets"] for k in names]
assert all(spans[i][1] == spans[i + 1][0] for i in range(5)), "expert tensors not contiguous"
assert spans[-1][1] - spans[0][0] == 17547264, spans[-1][1] - spans[0][0]
print("synth layout ok: expert of 17,547,264 bytes in one run")
PY
echo "1 2 3" > "$D/ids"
$BIN logits --model "$M" --ids-file "$D/ids" --out "$D/l.f32" || exit 1
python3 -c "
import array, math
a = array.array('f'); a.frombytes(open('$D/l.f32','rb').read())
assert len(a) == 3 * 512 and all(math.isfinite(x) for x in a), 'bad logits'
print('logits finite, spread', max(a) - min(a))"
# (--device-seconds 0.1: the device's rate is printed, not judged here;
# forecast.sh compares bench's figures)
$BIN bench --model "$M" --tokens 2 --ram 4.2 --device-seconds 0.1 --json > "$D/b" 2> "$D/err" || { cat "$D/err"; exit 1; }
tail -1 "$D/b" | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); assert d['gb_per_token_spine'] > 0; print('bench ok', d['s_per_token'], 's/token')"
# The synthetic model continues along its cycle of printable bytes, so text it
# wrote, pasted back into the prompt, is written again: speculation on that
# prompt drafts from the prompt, every draft is accepted, the output is the
# same as without speculation.
P="The quick brown fox"
T=$($BIN run --model "$M" --ram 4.2 --prompt "$P" --max-new 24 --spec off 2> "$D/err") || { cat "$D/err"; exit 1; }
[ ${#T} -eq 24 ] || { echo "expected 24 printable bytes, got '$T'"; exit 1; }
T2=$($BIN run --model "$M" --ram 4.2 --prompt "$P$T$P" --max-new 24 --spec on 2> "$D/err") || { cat "$D/err"; exit 1; }
[ "$T2" = "$T" ] || { echo "repeated prompt: '$T2' != '$T'"; exit 1; }
grep -Eq ' ([1-9][0-9]*) of \1 drafted tokens accepted' "$D/err" || { echo "drafts not all accepted:"; cat "$D/err"; exit 1; }
echo "synth repeats its text: $(tail -1 "$D/err")"
# Ctrl-C while the 2.3 GB dense-layer shard is written: its temporary file goes
$BIN synth --out "$D/c" --layers 2 --experts 16 2> "$D/err" &
pid=$!
i=0
while [ $i -lt 300 ] && ! ls -a "$D/c" 2>/dev/null | grep -q 'model-00002.*\.tmp'; do sleep 0.1; i=$((i + 1)); done
kill -INT $pid
wait $pid; rc=$?
[ $rc -eq 130 ] || { echo "Ctrl-C: exit $rc, not 130"; cat "$D/err"; exit 1; }
ls -a "$D/c" | grep -q '\.tmp' && { echo "Ctrl-C left a temporary shard:"; ls -la "$D/c"; exit 1; }
grep -q "stopped; its partial file was removed" "$D/err" || { echo "Ctrl-C not reported:"; cat "$D/err"; exit 1; }
echo "synth stopped by Ctrl-C: exit 130, no temporary shard left"
