#!/bin/sh
# The model fingerprint covers the tensors' data: a snapshot made by one
# model is refused by a copy that differs in one byte of one projection
# weight (no norm, no header changed: what a fine-tune with frozen norms
# looks like), in a copy or changed in place; the shard digests are cached
# by file identity ($XDG_CACHE_HOME/remora/fingerprint/), so the same model
# opened again restores its snapshot from the cache without reading the data.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" REMORA_PREFIX_CACHE_GB=0
status=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; status=1; }
run() { timeout 60 "$BIN" run --model "$1" --transcript "$2" --prompt "$3" --max-new 4 > "$T/out" 2> "$T/err"; }
# flip MODEL: adds 1 to one byte in the middle of the first projection
# weight that is not a norm (read from the shard headers)
flip() {
  python3 - "$1" <<'PY'
import json, struct, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + '/*.safetensors')):
    with open(f, 'r+b') as fh:
        n = struct.unpack('<Q', fh.read(8))[0]
        hdr = json.loads(fh.read(n))
        for name, t in sorted(hdr.items()):
            if name == '__metadata__' or 'norm' in name or 'proj' not in name:
                continue
            a, b = t['data_offsets']
            off = 8 + n + (a + b) // 2
            fh.seek(off); v = fh.read(1)[0]
            fh.seek(off); fh.write(bytes([(v + 1) & 0xff]))
            print(name)
            sys.exit(0)
sys.exit(1)
PY
}
cp -r "$FX/k3-tiny" "$T/A"
run "$T/A" "$T/c.jsonl" "What is 2 plus 2?" || bad "first run: $(cat "$T/err")"
cp "$T/c.jsonl" "$T/b.jsonl"; cp "$T/c.state" "$T/b.state"
cp "$T/c.jsonl" "$T/a.jsonl"; cp "$T/c.state" "$T/a.state"
n=$(ls "$T/cache/remora/fingerprint" 2>/dev/null | wc -l)
[ "$n" = 10 ] && ok "a digest cached per shard ($n)" || bad "$n digests cached"
cp -r "$T/A" "$T/B"
name=$(flip "$T/B") || bad "no projection weight to change"
run "$T/B" "$T/b.jsonl" "And 3 plus 3?"
grep -q "$T/b.state: made by another model" "$T/err" && grep -q " 0 restored, " "$T/err" &&
  ok "one byte of $name changed in a copy: the snapshot is refused" || bad "changed copy: $(cat "$T/err")"
n=$(ls "$T/cache/remora/fingerprint" | wc -l)
run "$T/A" "$T/a.jsonl" "And 3 plus 3?"
grep -q "tokens of state restored from the snapshot" "$T/err" && [ "$(ls "$T/cache/remora/fingerprint" | wc -l)" = "$n" ] &&
  ok "the model itself, opened again, restores it (digests from the cache)" || bad "same model: $(cat "$T/err")"
cp "$T/c.jsonl" "$T/a.jsonl"; cp "$T/c.state" "$T/a.state"
flip "$T/A" > /dev/null
run "$T/A" "$T/a.jsonl" "And 3 plus 3?"
grep -q "$T/a.state: made by another model" "$T/err" &&
  ok "the same byte changed in place (a new mtime): the snapshot is refused" || bad "changed in place: $(cat "$T/err")"
exit $status
