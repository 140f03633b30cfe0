"""Validate k3model.py against the K3 fixture (tests/fixtures/k3-tiny or $REMORA_FIXTURES):
loads the sharded safetensors with our own reader (k3io.py, MXFP4 dequantised exactly),
runs the model in float64 with the recurrent KDA form and compares with the goldens:
logits rel. RMS (limit 1e-4), routes (identical expert sets where the golden margin is
>= 1e-5), hidden states per layer, the MXFP4 samples, and chunked-vs-recurrent KDA.
Also checks that the exporter's MXFP4 quantiser reproduces the fixture's expert values and
that write/read of a checkpoint round-trips.  Runs on CPU in about a minute.

usage: python3 check_fixture.py [FIXTURES_DIR]
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import k3io  # noqa: E402
from k3model import K3Config, K3Model, kda_chunked, kda_recurrent, mxfp4_quantise, mxfp4_dequantise  # noqa: E402


def rel_rms(x, ref):
    return float(np.linalg.norm((x - ref).ravel()) / np.linalg.norm(ref.ravel()))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "REMORA_FIXTURES", os.path.join(os.path.dirname(__file__), "../../tests/fixtures"))
    fx = os.path.join(root, "k3-tiny")
    cfg = K3Config(json.load(open(os.path.join(fx, "config.json")))["text_config"])
    tensors = k3io.read_checkpoint(fx)
    model = k3io.load_into(K3Model(cfg).double(), tensors).eval()
    meta = json.load(open(os.path.join(fx, "goldens", "meta.json")))
    V = cfg.vocab_size
    ok = True
    worst = 0.0
    for p in meta["prompts"]:
        ids = torch.tensor([p["prompt_ids"]])
        hidden = []
        with torch.no_grad():
            logits = model(ids, mode="recurrent", hidden_out=hidden)[0].numpy()
        ref = np.fromfile(os.path.join(fx, "goldens", p["logits_file"]), dtype="<f4").reshape(p["T"], V)
        r = rel_rms(logits, ref)
        mx = float(np.abs(logits - ref).max())
        worst = max(worst, r)
        marg = np.array(p["top2_margin"])
        am_ok = bool(np.all((logits.argmax(-1) == ref.argmax(-1)) | (marg < 1e-3)))
        # routes
        routes = json.load(open(os.path.join(fx, "goldens", p["routes_file"])))["layers"]
        n_rt, n_bad, wmax = 0, 0, 0.0
        for li, moe in model.moe_layers():
            _, idx, w = moe.last
            for t, (gids, gw, gm) in enumerate(routes[str(li)]):
                n_rt += 1
                mine = idx[t].tolist()
                if gm >= 1e-5 and mine != gids:
                    n_bad += 1
                if mine == gids:
                    wmax = max(wmax, float(np.abs(w[t].numpy() - np.array(gw)).max()))
        line = "%-6s T=%3d logits rel_rms %.3e max_abs %.3e argmax %s routes %d/%d identical (max weight diff %.1e)" % (
            p["name"], p["T"], r, mx, "ok" if am_ok else "DIFF", n_rt - n_bad, n_rt, wmax)
        if p.get("hidden_file"):
            href = np.fromfile(os.path.join(fx, "goldens", p["hidden_file"]), dtype="<f4").reshape(p["hidden_shape"])
            hr = max(rel_rms(hidden[l][0].numpy(), href[l]) for l in range(len(hidden)))
            line += " hidden max rel_rms %.2e" % hr
            ok &= hr <= 1e-4
        print(line)
        ok &= r <= 1e-4 and mx <= 2e-3 and am_ok and n_bad == 0
        # chunked form of the whole model against the recurrent one
        with torch.no_grad():
            lc = model(ids, mode="chunk")[0].numpy()
        rc = rel_rms(lc, logits)
        print("       chunked-KDA model vs recurrent rel_rms %.2e" % rc)
        ok &= rc <= 1e-6

    # MXFP4 samples (nibble order, scale indexing)
    smp = json.load(open(os.path.join(fx, "goldens", "mxfp4_samples.json")))
    items = smp["samples"] if isinstance(smp, dict) and "samples" in smp else smp
    bad = 0
    for s in items:
        base = s["tensor"][:-len("weight_packed")]
        W = k3io.mxfp4_unpack(tensors[base + "weight_packed"][2], tensors[base + "weight_scale"][2])
        bad += W[s["row"], s["col"]] != s["value"]
    print("mxfp4 samples: %d/%d exact" % (len(items) - bad, len(items)))
    ok &= bad == 0

    # our quantiser reproduces the fixture's expert values exactly
    qbad = 0
    for li, moe in model.moe_layers():
        for w in ("w1", "w2", "w3"):
            W = getattr(moe.experts, w).detach()
            qbad += int((mxfp4_dequantise(*mxfp4_quantise(W)).double() != W).sum())
    print("mxfp4 quantiser round trip on fixture experts: %d values differ" % qbad)
    ok &= qbad == 0

    # KDA op: chunked vs recurrent on random inputs, fp32 and fp64
    g = torch.Generator().manual_seed(0)
    for dt in (torch.float64, torch.float32):
        B, T, H, K = 2, 203, 2, 128
        q = torch.nn.functional.normalize(torch.randn(B, T, H, K, generator=g, dtype=dt), dim=-1) * K ** -0.5
        k = torch.nn.functional.normalize(torch.randn(B, T, H, K, generator=g, dtype=dt), dim=-1)
        v = torch.randn(B, T, H, K, generator=g, dtype=dt)
        glog = -5 * torch.sigmoid(torch.randn(B, T, H, K, generator=g, dtype=dt) * 2 - 1)
        beta = torch.sigmoid(torch.randn(B, T, H, generator=g, dtype=dt))
        o_r = kda_recurrent(q, k, v, glog, beta).numpy()
        o_c = kda_chunked(q, k, v, glog, beta).double().numpy()
        e = rel_rms(o_c, o_r)
        print("KDA op chunked vs recurrent (%s, T=%d): rel_rms %.2e" % (str(dt)[6:], T, e))
        ok &= e <= (1e-12 if dt == torch.float64 else 1e-5)

    # exporter/reader round trip: export the fixture model and reload it
    with tempfile.TemporaryDirectory() as d:
        k3io.write_checkpoint(d, k3io.export_tensors(model), cfg.num_hidden_layers)
        t2 = k3io.read_checkpoint(d)
        m2 = k3io.load_into(K3Model(cfg).double(), t2).eval()
        ids = torch.tensor([meta["prompts"][0]["prompt_ids"]])
        with torch.no_grad():
            d_ = (m2(ids, mode="recurrent") - model(ids, mode="recurrent")).abs().max().item()
        same = all(tensors[n][0] == t2[n][0] and list(tensors[n][1]) == list(t2[n][1]) for n in tensors)
        print("export round trip: %d tensors, names/dtypes/shapes %s, logits max diff %.1e" % (
            len(t2), "identical" if same and set(t2) == set(tensors) else "DIFFER", d_))
        ok &= same and set(t2) == set(tensors) and d_ == 0.0
    print("worst logits rel_rms %.3e" % worst)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
