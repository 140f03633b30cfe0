# first_layers.py SRC DST N — writes to DST a model of SRC's first N layers
# (config, index and one shard; tokenizer files copied), for the tests that
# need a model the engine serves but not what it computes: a prompt of tens
# of thousands of tokens costs a fixture's attention layers seconds per
# thousand (quadratic), the model cut to layers that are all KDA (linear in
# the prompt's length) a fraction of that. The engine refuses tensors its
# config does not use, so the later layers' tensors are left out of the
# shard, not only of config.json.
import json, os, re, shutil, struct, sys

src, dst, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
idx = json.load(open(f"{src}/model.safetensors.index.json"))


def kept(name):
    m = re.search(r"\.layers\.(\d+)\.", name)
    return not m or int(m.group(1)) < keep


os.makedirs(dst, exist_ok=True)
head, blobs, off = {}, [], 0
for shard in sorted(set(idx["weight_map"].values())):
    with open(f"{src}/{shard}", "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
        for name, t in h.items():
            if name == "__metadata__" or not kept(name):
                continue
            b, e = t["data_offsets"]
            f.seek(8 + n + b)
            blobs.append(f.read(e - b))
            head[name] = dict(t, data_offsets=[off, off + e - b])
            off += e - b
hj = json.dumps(head).encode()
hj += b" " * (-len(hj) % 8)
shard = "model-00001-of-00001.safetensors"
with open(f"{dst}/{shard}", "wb") as o:
    o.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
with open(f"{dst}/model.safetensors.index.json", "w") as o:
    json.dump({"metadata": {}, "weight_map": {k: shard for k in head}}, o)
c = json.load(open(f"{src}/config.json"))
tc = c.get("text_config", c)
tc["num_hidden_layers"] = keep
lac = tc.get("linear_attn_config")
if lac:          # Kimi-Linear's one-based layer lists, kept to the first N
    for k in ("kda_layers", "full_attn_layers"):
        lac[k] = [l for l in lac[k] if l <= keep]
with open(f"{dst}/config.json", "w") as o:
    json.dump(c, o, indent=1)
for f in os.listdir(src):
    if not f.startswith("model") and f != "config.json" and os.path.isfile(f"{src}/{f}"):
        shutil.copy(f"{src}/{f}", dst)
