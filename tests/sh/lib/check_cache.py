#!/usr/bin/env python3
"""check_cache.py MODEL FIXTURE [--all] [--allow-tmp] — checks a stream-mode
disk cache against the original checkpoint: every MODEL/.remora/experts/L*/E*.bin
must be the expert's raw bytes (its tensors' spans in shard order) followed by
the 40-byte trailer "RMX2" + CRC-32 (zlib) + byte count + layer + expert +
first shard offset + revision, and equal the fixture's bytes.
With --all every routed expert must be there. Exits 1 on any problem."""
import json, os, re, struct, sys, zlib

model, fx = sys.argv[1], sys.argv[2]
want_all, allow_tmp = "--all" in sys.argv, "--allow-tmp" in sys.argv
idx = json.load(open(os.path.join(fx, "model.safetensors.index.json")))["weight_map"]
spans = {}
for shard in sorted(set(idx.values())):
    with open(os.path.join(fx, shard), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
    for name, t in hdr.items():
        m = re.search(r"layers\.(\d+)\.block_sparse_moe\.experts\.(\d+)\.", name)
        if m:
            a, b = t["data_offsets"]
            spans.setdefault((int(m.group(1)), int(m.group(2))), []).append((shard, 8 + n + a, 8 + n + b))
bad, seen = [], set()
top = os.path.join(model, ".remora", "experts")
for ld in sorted(os.listdir(top)) if os.path.isdir(top) else []:
    for fn in sorted(os.listdir(os.path.join(top, ld))):
        path = os.path.join(top, ld, fn)
        m = re.fullmatch(r"E(\d+)\.bin", fn)
        if not m:
            if not (allow_tmp and ".tmp." in fn):
                bad.append("unexpected file " + path)
            continue
        key = (int(ld[1:]), int(m.group(1)))
        parts = sorted(spans.get(key, []), key=lambda p: p[1])
        raw = b""
        for shard, a, b in parts:
            with open(os.path.join(fx, shard), "rb") as f:
                f.seek(a)
                raw += f.read(b - a)
        data = open(path, "rb").read()
        body, tr = data[:-40], data[-40:]
        if len(data) != len(raw) + 40 or tr[:4] != b"RMX2":
            bad.append("%s: %d bytes, want %d + trailer" % (path, len(data), len(raw)))
        elif struct.unpack("<IQ", tr[4:16]) != (zlib.crc32(body), len(raw)) or body != raw:
            bad.append("%s: bytes or checksum differ from the checkpoint" % path)
        elif struct.unpack("<IIQ", tr[16:32]) != (key[0], key[1], parts[0][1]):
            bad.append("%s: the trailer names another expert or span" % path)
        seen.add(key)
if want_all and seen != set(spans):
    bad.append("%d of %d experts cached" % (len(seen), len(spans)))
for b in bad:
    print("cache:", b)
print("cache: %d expert files checked" % len(seen))
sys.exit(1 if bad else 0)
