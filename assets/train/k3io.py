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


# ----------------------------------------------------------------------------- config

def build_config(d):
    """Root config.json (model_type kimi_k3 wrapping a kimi_linear text_config) with the same
    keys as K3's, for the dims in d: hidden, layers, full_attn (one-based), kda_heads,
    kda_head_dim, mla_heads, q_lora, kv_lora, dense_inter, experts, topk, moe_inter, latent,
    shared, block, vocab, bos, eos, pad, media."""
    L = d["layers"]
    full = list(d["full_attn"])
    kda = [i for i in range(1, L + 1) if i not in full]
    quant = {
        "config_groups": {"group_0": {
            "format": "mxfp4-pack-quantized", "input_activations": None, "output_activations": None,
            "targets": ["Linear"],
            "weights": {"actorder": None, "block_structure": None, "dynamic": False, "group_size": 32,
                        "num_bits": 4, "observer": "minmax", "observer_kwargs": {},
                        "scale_dtype": "torch.uint8", "strategy": "group", "symmetric": True,
                        "type": "float", "zp_dtype": None}}},
        "format": "mxfp4-pack-quantized", "global_compression_ratio": None,
        "ignore": ["re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*",
                   "re:.*lm_head.*", "re:.*vision_tower.*", "re:.*mm_projector.*"],
        "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"}
    text = {
        "_name_or_path": "", "activation_situ_beta": 4.0, "activation_situ_linear_beta": 25.0,
        "architectures": ["KimiLinearForCausalLM"], "attn_res_block_size": d["block"],
        "auto_map": {"AutoConfig": "configuration_kimi_k3.KimiLinearConfig",
                     "AutoModel": "modeling_kimi_linear.KimiLinearModel",
                     "AutoModelForCausalLM": "modeling_kimi_linear.KimiLinearForCausalLM"},
        "bos_token_id": d["bos"], "dtype": "bfloat16", "eos_token_id": d["eos"],
        "first_k_dense_replace": 1, "hidden_act": "situ", "hidden_size": d["hidden"],
        "initializer_range": 0.02, "intermediate_size": d["dense_inter"], "kv_lora_rank": d["kv_lora"],
        "latent_moe_use_norm": True,
        "linear_attn_config": {"full_attn_layers": full, "gate_lower_bound": -5.0,
                               "head_dim": d["kda_head_dim"], "kda_layers": kda, "num_heads": d["kda_heads"],
                               "short_conv_kernel_size": 4, "use_full_rank_gate": True},
        "max_position_embeddings": 1048576, "mla_use_nope": True, "mla_use_output_gate": True,
        "model_type": "kimi_linear", "moe_intermediate_size": d["moe_inter"], "moe_layer_freq": 1,
        "moe_renormalize": True, "moe_router_activation_func": "sigmoid",
        "num_attention_heads": d["mla_heads"], "num_expert_group": 1, "num_experts": d["experts"],
        "num_experts_per_token": d["topk"], "num_hidden_layers": L, "num_key_value_heads": d["mla_heads"],
        "num_nextn_predict_layers": 0, "num_shared_experts": d["shared"], "pad_token_id": d["pad"],
        "q_lora_rank": d["q_lora"], "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
        "quantization_config": quant, "rms_norm_eps": 1e-05, "routed_expert_hidden_size": d["latent"],
        "routed_scaling_factor": 1.0, "tie_word_embeddings": False, "topk_group": 1,
        "topk_method": "noaux_tc", "transformers_version": "4.56.2", "use_cache": True,
        "use_grouped_topk": True, "v_head_dim": 128, "vocab_size": d["vocab"]}
    vision = {
        "_attn_implementation": "flash_attention_2", "activation_func": "gelu_pytorch_tanh",
        "attn_bias": False, "init_pos_emb_height": 64, "init_pos_emb_time": 4, "init_pos_emb_width": 64,
        "linear_bias": False, "merge_kernel_size": [2, 2], "merge_type": "sd2_tpool",
        "mlp_type": "mlp2", "mm_hidden_size": 1024, "mm_projector_type": "patchmergerv2",
        "norm_type": "rmsnorm", "patch_embed_proj_bias": False, "patch_size": 14,
        "pos_emb_interpolation_mode": "bilinear", "pos_emb_type": "divided_fixed",
        "projector_hidden_act": "gelu", "projector_ln_eps": 1e-05, "qkv_hidden_size": 1536,
        "text_hidden_size": d["hidden"], "vt_hidden_size": 1024, "vt_intermediate_size": 4096,
        "vt_num_attention_heads": 12, "vt_num_hidden_layers": 27}
    return {
        "architectures": ["KimiK3ForConditionalGeneration"],
        "auto_map": {"AutoConfig": "configuration_kimi_k3.KimiK3Config",
                     "AutoModel": "modeling_kimi_k3.KimiK3ForConditionalGeneration",
                     "AutoModelForCausalLM": "modeling_kimi_k3.KimiK3ForConditionalGeneration"},
        "bos_token_id": d["bos"], "dtype": "bfloat16", "eos_token_id": d["eos"], "ignore_index": -100,
        "image_placeholder": "<|kimi_image_placeholder|>", "media_placeholder_token_id": d["media"],
        "model_type": "kimi_k3", "pad_token_id": d["pad"], "text_config": text,
        "tie_word_embeddings": False, "vision_config": vision}


# The shipped model's dimensions (vocab: 1024 ranks + 256 specials).
DEFAULT_DIMS = dict(hidden=384, layers=10, full_attn=[4, 8, 10], kda_heads=3, kda_head_dim=128,
                    mla_heads=3, q_lora=128, kv_lora=128, dense_inter=1024, experts=64, topk=4,
                    moe_inter=128, latent=192, shared=2, block=3, vocab=1280,
                    bos=1024, eos=1026, pad=1279, media=1045)
