"""Reading and writing Kimi K3 checkpoints (sharded safetensors, compressed-tensors MXFP4
experts) with numpy and json only, and mapping them onto k3model.K3Model.

Safetensors layout written here (as the Rust writer does): 8-byte little-endian header
length, a JSON header with "__metadata__": {"format": "pt"} padded with spaces to a multiple
of 8, then the data, tensors ordered by dtype size (largest first) then by name.  Expert
names sort so that each expert's six tensors (w1/w2/w3 x weight_packed/weight_scale) are
contiguous and the experts of a layer form one run in lexicographic id order.
"""
import json
import os
import struct

import numpy as np
import torch

PREFIX = "language_model.model."
HEAD = "language_model.lm_head.weight"
DTYPES = {"F64": (np.float64, 8), "F32": (np.float32, 4), "BF16": (np.uint16, 2),
          "F16": (np.float16, 2), "U8": (np.uint8, 1), "I64": (np.int64, 8)}

# Tensors kept in F32 in K3 checkpoints (name suffixes); everything else in the trunk is BF16.
F32_SUFFIXES = ("self_attn.A_log", "self_attn.dt_bias", "q_conv1d.weight", "k_conv1d.weight",
                "v_conv1d.weight", "self_attn.o_norm.weight", "gate.e_score_correction_bias")


# ----------------------------------------------------------------------------- safetensors

def read_safetensors(path):
    """-> {name: (dtype string, shape, raw numpy array of the stored element type)}"""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        npdt, _ = DTYPES[info["dtype"]]
        a, b = info["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=npdt).reshape(info["shape"])
        out[name] = (info["dtype"], info["shape"], arr)
    return out


def write_safetensors(path, tensors):
    """tensors: {name: (dtype string, numpy array already in the stored element type)}."""
    names = sorted(tensors, key=lambda nm: (-DTYPES[tensors[nm][0]][1], nm.encode()))
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for nm in names:
        dt, arr = tensors[nm]
        nb = arr.nbytes
        header[nm] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + nb]}
        off += nb
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((-len(hj)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for nm in names:
            f.write(np.ascontiguousarray(tensors[nm][1]).tobytes())
    return off


def read_checkpoint(d):
    """All tensors of a sharded checkpoint directory (via model.safetensors.index.json)."""
    idx = json.load(open(os.path.join(d, "model.safetensors.index.json")))
    out = {}
    for shard in sorted(set(idx["weight_map"].values())):
        out.update(read_safetensors(os.path.join(d, shard)))
    return out


# ----------------------------------------------------------------------------- number formats

def bf16_to_f32(u16):
    return (u16.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """Round-to-nearest-even float32 -> bf16 bits (uint16); no NaNs expected."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    r = ((u >> 16) & 1) + 0x7FFF
    return ((u + r) >> 16).astype(np.uint16)


FP4 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], dtype=np.float64)


def mxfp4_unpack(packed, scale):
    """compressed-tensors mxfp4-pack-quantized -> float64 [out, in] (exact)."""
    codes = np.empty((packed.shape[0], packed.shape[1] * 2), dtype=np.uint8)
    codes[:, 0::2] = packed & 0xF
    codes[:, 1::2] = packed >> 4
    vals = FP4[codes]
    s = np.ldexp(1.0, scale.astype(np.int64) - 127)
    return vals * np.repeat(s, 32, axis=1)


def mxfp4_pack(codes):
    """codes uint8 [out, in] (0..15) -> packed [out, in/2], low nibble = even column."""
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def to_float(dtype, arr):
    if dtype == "BF16":
        return bf16_to_f32(arr).astype(np.float64)
    return arr.astype(np.float64)


# ----------------------------------------------------------------------------- model mapping

def load_into(model, tensors, dtype=torch.float64):
    """Fill a K3Model from checkpoint tensors (read_checkpoint output); experts dequantised
    exactly.  Every model parameter must be present and every checkpoint tensor used."""
    used = set()
    sd = model.state_dict()
    newsd = {}
    for key in sd:
        if ".experts." in key:
            continue
        name = HEAD if key == "lm_head.weight" else PREFIX + key
        dt, shape, arr = tensors[name]
        val = to_float(dt, arr)
        if key.endswith("A_log") and val.shape != tuple(sd[key].shape):
            raise ValueError("%s: shape %s" % (name, val.shape))
        newsd[key] = torch.from_numpy(val.reshape(sd[key].shape).copy()).to(dtype)
        used.add(name)
    for li, moe in model.moe_layers():
        E = moe.E
        for w in ("w1", "w2", "w3"):
            mats = []
            for e in range(E):
                base = "%slayers.%d.block_sparse_moe.experts.%d.%s." % (PREFIX, li, e, w)
                mats.append(mxfp4_unpack(tensors[base + "weight_packed"][2], tensors[base + "weight_scale"][2]))
                used.update([base + "weight_packed", base + "weight_scale"])
            newsd["layers.%d.block_sparse_moe.experts.%s" % (li, w)] = torch.from_numpy(np.stack(mats)).to(dtype)
    missing = set(tensors) - used
    if missing:
        raise ValueError("unused checkpoint tensors: %s" % sorted(missing)[:5])
    model.load_state_dict(newsd, strict=True)
    return model


def export_tensors(model):
    """-> {checkpoint name: (dtype string, numpy array)} in K3's dtypes.  The experts are
    quantised to MXFP4 (k3model.mxfp4_quantise) unless they already are representable, in
    which case the round trip is exact."""
    from k3model import mxfp4_quantise
    out = {}
    for key, t in model.state_dict().items():
        if ".experts." in key:
            continue
        name = HEAD if key == "lm_head.weight" else PREFIX + key
        a = t.detach().float().cpu().numpy()
        if key.endswith(F32_SUFFIXES):
            out[name] = ("F32", a.astype(np.float32))
        else:
            out[name] = ("BF16", f32_to_bf16(a))
    for li, moe in model.moe_layers():
        for w in ("w1", "w2", "w3"):
            W = getattr(moe.experts, w).detach().float()
            codes, scale = mxfp4_quantise(W)
            for e in range(W.shape[0]):
                base = "%slayers.%d.block_sparse_moe.experts.%d.%s." % (PREFIX, li, e, w)
                out[base + "weight_packed"] = ("U8", mxfp4_pack(codes[e].cpu().numpy()))
                out[base + "weight_scale"] = ("U8", scale[e].cpu().numpy().astype(np.uint8))
    return out


def shard_of(name, n_layers):
    """K3-style sharding: embed, one shard per layer, then norm/AttnRes/lm_head (1-based)."""
    if name.startswith(PREFIX + "embed_tokens"):
        return 1
    if name.startswith(PREFIX + "layers."):
        return 2 + int(name[len(PREFIX + "layers."):].split(".")[0])
    return n_layers + 2


def write_checkpoint(d, tensors, n_layers):
    """Write shards model-0000N-of-0000MM.safetensors (5-digit index, 6-digit total, as K3)
    and model.safetensors.index.json."""
    os.makedirs(d, exist_ok=True)
    total = n_layers + 2
    groups = {}
    for nm in tensors:
        groups.setdefault(shard_of(nm, n_layers), {})[nm] = tensors[nm]
    wmap, size = {}, 0
    for i in range(1, total + 1):
        fn = "model-%05d-of-%06d.safetensors" % (i, total)
        size += write_safetensors(os.path.join(d, fn), groups[i])
        for nm in groups[i]:
            wmap[nm] = fn
    index = {"metadata": {"total_size": size}, "weight_map": dict(sorted(wmap.items()))}
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")
