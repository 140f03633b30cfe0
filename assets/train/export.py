"""Turn train.py's output (weights-N.npz with checkpoint tensors, metrics.json) into the K3
checkpoint directory: model-0000N-of-0000MM.safetensors shards, model.safetensors.index.json,
config.json, generation_config.json (the tokenizer files are already there), then check the
export: reload it with our reader, rebuild the model and compare its logits with the model
built straight from the npz tensors (must be identical) and with the logits the training
machine computed (check_logits.npy).

usage: python3 export.py RUN_DIR MODEL_DIR
"""
import glob
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import k3io  # noqa: E402
import tokenizer as tk  # noqa: E402
from k3model import K3Config, K3Model  # noqa: E402


def load_npz(run):
    tensors = {}
    for fn in sorted(glob.glob(os.path.join(run, "weights-*.npz"))):
        with np.load(fn) as z:
            for key in z.files:
                name, dt = key.rsplit("|", 1)
                tensors[name] = (dt, z[key])
    return tensors


def main():
    run, out = sys.argv[1], sys.argv[2]
    metrics = json.load(open(os.path.join(run, "metrics.json")))
    dims = metrics["dims"]
    config = k3io.build_config(dims)
    tensors = load_npz(run)
    for old in glob.glob(os.path.join(out, "model-*.safetensors")):
        os.remove(old)
    k3io.write_checkpoint(out, tensors, dims["layers"])
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": dims["bos"], "eos_token_id": dims["eos"], "pad_token_id": dims["pad"]}, f, indent=2)
        f.write("\n")

    # check: reload from disk vs straight from the npz tensors
    cfg = K3Config(config["text_config"])
    as_read = k3io.read_checkpoint(out)
    direct = {n: (dt, arr.shape, arr) for n, (dt, arr) in tensors.items()}
    m_disk = k3io.load_into(K3Model(cfg), as_read, torch.float32).eval()
    m_mem = k3io.load_into(K3Model(cfg), direct, torch.float32).eval()
    tok = tk.Tokenizer.load(out)
    item = json.loads(open(os.path.join(os.path.dirname(__file__), "../eval/heldout.jsonl")).readline())
    assert item["prompt"] == metrics["check_prompt"]
    ids = tk.encode_segments(tok, tk.user_segments(item["prompt"]) + tk.gen_prompt_segments()
                             + tk.assistant_tail_segments(item["reasoning"], item["reference"]))
    x = torch.tensor([ids])
    with torch.no_grad():
        l_disk = m_disk(x)[0].numpy()
        l_mem = m_mem(x)[0].numpy()
        l_rec = m_disk(x, mode="recurrent")[0].numpy()
    ref = np.load(os.path.join(run, "check_logits.npy"))
    rr = lambda a, b: float(np.linalg.norm(a - b) / np.linalg.norm(b))  # noqa: E731
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(out, "*")))
    print("tensors %d, shards %d, directory %.2f MB" % (len(as_read), dims["layers"] + 2, size / 1e6))
    print("reloaded vs in-memory logits max abs diff %.3g" % float(np.abs(l_disk - l_mem).max()))
    print("reloaded (CPU fp32, chunked KDA) vs training machine (GPU fp32) rel RMS %.3g, argmax agree %.4f" % (
        rr(l_disk, ref), float((l_disk.argmax(-1) == ref.argmax(-1)).mean())))
    print("recurrent vs chunked KDA on the exported model rel RMS %.3g" % rr(l_rec, l_disk))
    ok = np.array_equal(l_disk, l_mem) and rr(l_disk, ref) < 1e-3
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
