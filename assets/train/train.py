"""Train the embedded demonstration model (k3model.K3Model at k3io.DEFAULT_DIMS) on the
gen_data.py task mix, quantise its routed experts to MXFP4 with a short quantisation-aware
phase, evaluate it with the dequantised weights and write the checkpoint tensors.

Loss only on the assistant part (reasoning, answer and closing tags).  Expert balance is
auxiliary-loss-free: after every step each MoE layer's e_score_correction_bias moves by
gamma * sign(mean load - load) (DeepSeek-V3).

Outputs in --out: weights-N.npz (checkpoint tensors under their K3 names, "NAME|DTYPE"
keys, split so each file stays under 15 MB; export.py turns them into safetensors shards),
metrics.json (training, accuracy, NLL, expert load), check_logits.npy (fp32 logits of one
held-out chat, for checking the export), log.txt.

usage (GPU): python3 train.py --out DIR --tok TOKDIR --heldout heldout.jsonl --minutes 7.5
      (CPU smoke test): python3 train.py --out /tmp/x --tok ... --heldout ... --device cpu \
          --dims '{"hidden":64,...}' --minutes 0.3 --n-examples 2000 --eval-limit 20
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_data  # noqa: E402
import k3io  # noqa: E402
import tokenizer as tk  # noqa: E402
from k3model import K3Config, K3Model, compile_activation, mxfp4_dequantise, mxfp4_quantise  # noqa: E402

LOG = []


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.append(s)


# ----------------------------------------------------------------------------- data

def encode_example(tok, ex):
    ctx = tk.encode_segments(tok, tk.user_segments(ex["prompt"]) + tk.gen_prompt_segments())
    tgt = tk.encode_segments(tok, tk.assistant_tail_segments(ex["reasoning"], ex["reference"]))
    return ctx, tgt


_TOK = None


def _gen_worker(args):
    seed, n, tokdir, exclude = args
    global _TOK
    if _TOK is None:
        _TOK = tk.Tokenizer.load(tokdir)
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        ex = gen_data.make_example(rng)
        if ex["prompt"] in exclude:
            continue
        ctx, tgt = encode_example(_TOK, ex)
        out.append((np.array(ctx + tgt, dtype=np.int16), len(ctx)))
    return out


def generate(n, tokdir, exclude, seed, procs):
    per = 2000
    jobs = [(seed * 100003 + i, min(per, n - i * per), tokdir, exclude) for i in range((n + per - 1) // per)]
    if procs > 1:
        with mp.Pool(procs) as pool:
            parts = pool.map(_gen_worker, jobs)
    else:
        parts = [_gen_worker(j) for j in jobs]
    return [x for p in parts for x in p]


def batch_iter(data, tokens, pad, rng):
    """Length-bucketed batches of about `tokens` padded tokens, forever."""
    n = len(data)
    while True:
        perm = rng.permutation(n)
        for s in range(0, n, 8192):
            chunk = sorted(perm[s:s + 8192], key=lambda i: len(data[i][0]))
            batches, cur, mx = [], [], 0
            for i in chunk:
                L = len(data[i][0])
                if cur and max(mx, L) * (len(cur) + 1) > tokens:
                    batches.append(cur)
                    cur, mx = [], 0
                cur.append(i)
                mx = max(mx, L)
            if cur:
                batches.append(cur)
            for bi in rng.permutation(len(batches)):
                yield make_batch([data[i] for i in batches[bi]], pad)


def make_batch(items, pad):
    T = max(len(x[0]) for x in items) - 1
    ids = np.full((len(items), T + 1), pad, dtype=np.int64)
    mask = np.zeros((len(items), T), dtype=bool)
    for r, (seq, nctx) in enumerate(items):
        ids[r, :len(seq)] = seq
        mask[r, nctx - 1:len(seq) - 1] = True          # labels that are assistant tokens
    ids = torch.from_numpy(ids)
    return ids[:, :-1], ids[:, 1:], torch.from_numpy(mask)


# ----------------------------------------------------------------------------- model

def init_model(model, cfg, seed):
    g = torch.Generator().manual_seed(seed)
    std, L = 0.02, cfg.num_hidden_layers
    out_std = std / math.sqrt(2 * L)
    for name, p in model.named_parameters():
        with torch.no_grad():
            if name.endswith(("layernorm.weight", "norm.weight", "routed_expert_norm.weight")):
                p.fill_(1.0)
            elif name.endswith("_res_proj.weight"):
                p.zero_()
            elif name.endswith("conv1d.weight"):
                p.uniform_(-0.5, 0.5, generator=g)
            elif name.endswith("A_log"):
                p.zero_()
            elif name.endswith("dt_bias"):
                p.uniform_(-8.0, -1.0, generator=g)
            elif name.endswith(("o_proj.weight", "down_proj.weight", "routed_expert_up_proj.weight", "experts.w2")):
                p.normal_(0.0, out_std, generator=g)
            else:
                p.normal_(0.0, std, generator=g)


def bf16_round_(model):
    """Round the trunk to bf16 (its stored precision) in place; F32 tensors stay."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".experts." in name or name.endswith(("A_log", "dt_bias", "conv1d.weight", "o_norm.weight")):
                continue
            p.copy_(p.to(torch.bfloat16).float())


def quantise_experts_(model):
    with torch.no_grad():
        for _, moe in model.moe_layers():
            for w in ("w1", "w2", "w3"):
                p = getattr(moe.experts, w)
                p.copy_(mxfp4_dequantise(*mxfp4_quantise(p)).to(p.dtype))
            moe.experts.quant = False


# ----------------------------------------------------------------------------- evaluation

def response_text(tok, ids, eos):
    text = tok.decode([i for i in ids if i != eos])
    a = text.find("<|open|>response<|sep|>")
    if a < 0:
        return None
    a += len("<|open|>response<|sep|>")
    b = text.find("<|close|>response<|sep|>", a)
    return text[a:b] if b >= 0 else text[a:]


@torch.no_grad()
def greedy(model, tok, prompts, eos, pad, max_new, dev, bs, amp):
    outs = []
    for s in range(0, len(prompts), bs):
        ps = prompts[s:s + bs]
        lens = [len(p) for p in ps]
        T = max(lens) + max_new
        ids = torch.full((len(ps), T), pad, dtype=torch.long)
        for r, p in enumerate(ps):
            ids[r, :len(p)] = torch.tensor(p)
        ids = ids.to(dev)
        cur = torch.tensor(lens, device=dev)
        done = torch.zeros(len(ps), dtype=torch.bool, device=dev)
        rows = torch.arange(len(ps), device=dev)
        for _ in range(max_new):
            upto = int(cur.max())
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
                logits = model(ids[:, :upto])
            nxt = logits[rows, cur - 1].float().argmax(-1)
            nxt = torch.where(done, torch.full_like(nxt, pad), nxt)
            ids[rows, cur.clamp(max=T - 1)] = torch.where(done, ids[rows, cur.clamp(max=T - 1)], nxt)
            done |= nxt == eos
            cur = torch.where(done, cur, cur + 1)
            if bool(done.all()) or int(cur.max()) >= T:
                break
        for r in range(len(ps)):
            outs.append(ids[r, lens[r]:int(cur[r]) + 1].tolist())
    return outs


@torch.no_grad()
def evaluate(model, tok, items, dev, amp_decode, max_new=360, bs=512, decode=True):
    """Greedy exact match per task (skipped unless decode), NLL of the reference answers
    and expert loads.  NLL: each item's chat is rendered with the reference reasoning in the
    think channel; the target is the reference answer's tokens in the response channel
    (teacher-forced, fp32); reported per token (sum of NLL / number of answer tokens)."""
    eos, pad = tok.sid("<|end_of_msg|>"), tok.sid("[PAD]")
    model.eval()
    prompts = [tk.encode_segments(tok, tk.user_segments(it["prompt"]) + tk.gen_prompt_segments()) for it in items]
    gens = greedy(model, tok, prompts, eos, pad, max_new, dev, bs, amp_decode) if decode else []
    per = {}
    examples = []
    for it, g in zip(items, gens):
        got = response_text(tok, g, eos)
        ok = got == it["reference"]
        per.setdefault(it["task"], [0, 0])
        per[it["task"]][0] += ok
        per[it["task"]][1] += 1
        if not ok and len(examples) < 40:
            examples.append({"task": it["task"], "prompt": it["prompt"], "reference": it["reference"], "got": got})
    acc = {t: c / n for t, (c, n) in per.items()}
    overall = sum(c for c, _ in per.values()) / sum(n for _, n in per.values()) if per else None

    # NLL of the reference answers (teacher-forced reasoning) and expert loads, fp32
    nll_tok, nll_n = {}, {}
    loads = {li: torch.zeros(moe.E, dtype=torch.long) for li, moe in model.moe_layers()}
    for s in range(0, len(items), 64):
        chunk = items[s:s + 64]
        seqs, spans = [], []
        for it in chunk:
            ctx = tk.encode_segments(tok, tk.user_segments(it["prompt"]) + tk.gen_prompt_segments()
                                     + [(it["reasoning"], False)] + tk.close_tag("think") + tk.open_tag("response"))
            ans = tok.encode(it["reference"])
            rest = tk.encode_segments(tok, tk.close_tag("response") + tk.close_tag("message") + [("<|end_of_msg|>", True)])
            seqs.append(ctx + ans + rest)
            spans.append((len(ctx), len(ctx) + len(ans)))
        T = max(len(x) for x in seqs)
        ids = torch.full((len(seqs), T), pad, dtype=torch.long)
        for r, x in enumerate(seqs):
            ids[r, :len(x)] = torch.tensor(x)
        logits = model(ids.to(dev)).float()
        lp = torch.log_softmax(logits, -1)
        for r, (it, (a, b)) in enumerate(zip(chunk, spans)):
            tgt = ids[r, a:b].to(dev)
            nll = -lp[r, a - 1:b - 1].gather(-1, tgt[:, None]).sum().item()
            nll_tok[it["task"]] = nll_tok.get(it["task"], 0.0) + nll
            nll_n[it["task"]] = nll_n.get(it["task"], 0) + (b - a)
        valid = torch.zeros(len(seqs), T, dtype=torch.bool)
        for r, x in enumerate(seqs):
            valid[r, :len(x)] = True
        valid = valid.reshape(-1).to(dev)
        for li, moe in model.moe_layers():
            idx = moe.last[1][valid]
            loads[li] += torch.bincount(idx.reshape(-1), minlength=moe.E).cpu()
    nll = {t: nll_tok[t] / nll_n[t] for t in nll_tok}
    nll_all = sum(nll_tok.values()) / sum(nll_n.values())
    load_stats = {}
    for li, c in loads.items():
        share = c.double() / c.sum()
        load_stats[str(li)] = {"min_share": float(share.min()), "max_share": float(share.max()),
                               "mean_share": float(share.mean()), "dead": int((c == 0).sum()),
                               "counts": c.tolist()}
    model.train()
    return {"accuracy_overall": overall, "accuracy": acc, "nll_per_token": nll_all, "nll": nll,
            "n_items": len(items), "expert_load": load_stats, "failures": examples}


# ----------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tok", required=True)
    ap.add_argument("--heldout", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dims", default=None, help="JSON overriding k3io.DEFAULT_DIMS")
    ap.add_argument("--minutes", type=float, default=7.5, help="main training time")
    ap.add_argument("--qat-frac", type=float, default=0.15, help="final fraction of time with MXFP4 fake quant")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--tokens", type=int, default=32768, help="padded tokens per batch")
    ap.add_argument("--n-examples", type=int, default=800000)
    ap.add_argument("--procs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--gamma", type=float, default=1e-3, help="bias update speed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-limit", type=int, default=0)
    ap.add_argument("--max-new", type=int, default=300, help="greedy decoding limit")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    torch.manual_seed(a.seed)

    tok = tk.Tokenizer.load(a.tok)
    dims = dict(k3io.DEFAULT_DIMS)
    if a.dims:
        dims.update(json.loads(a.dims))
    config = k3io.build_config(dims)
    cfg = K3Config(config["text_config"])
    items = [json.loads(l) for l in open(a.heldout)]
    if a.eval_limit:
        items = items[::max(1, len(items) // a.eval_limit)][:a.eval_limit]
    exclude = set(json.loads(l)["prompt"] for l in open(a.heldout))

    t0 = time.time()
    data = generate(a.n_examples, a.tok, exclude, a.seed, a.procs)
    lens = np.array([len(x[0]) for x in data])
    log("data: %d examples, %.1f tokens mean, %d max, %.1fs" % (len(data), lens.mean(), lens.max(), time.time() - t0))
    if cuda:            # CUDA only after the data workers have forked
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        log("gpu", torch.cuda.get_device_name(0), "torch", torch.__version__)

    model = K3Model(cfg)
    init_model(model, cfg, a.seed)
    model.to(dev)
    if cuda:
        log("expert activation compiled:", compile_activation(dev))
    n_trunk = sum(p.numel() for n, p in model.named_parameters() if ".experts." not in n)
    n_exp = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
    log("params: trunk %.2fM, routed experts %.2fM" % (n_trunk / 1e6, n_exp / 1e6))
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "conv1d" not in n]
    nodecay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "conv1d" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": nodecay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8, **({"fused": True} if cuda else {}))
    pad = tok.sid("[PAD]")
    it = batch_iter(data, a.tokens, pad, np.random.default_rng(a.seed))
    budget = a.minutes * 60
    warm = 100
    step, t_train, ema, qat_on = 0, time.time(), None, False
    hist = []
    while True:
        el = time.time() - t_train
        frac = el / budget
        if frac >= 1.0:
            break
        if not qat_on and frac >= 1.0 - a.qat_frac:
            qat_on = True
            for _, moe in model.moe_layers():
                moe.experts.quant = True
            log("step %d: MXFP4 fake quantisation on (QAT)" % step)
        lr = a.lr * min(1.0, (step + 1) / warm) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y, m = next(it)
        x, y, m = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True), m.to(dev, non_blocking=True)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                               torch.where(m, y, torch.full_like(y, -100)).reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            valid = (x != pad).reshape(-1, 1).float()           # no host sync in this loop
            for _, moe in model.moe_layers():
                idx = moe.last[1]
                cnt = torch.zeros(moe.E, device=dev).scatter_add_(0, idx.reshape(-1), valid.expand_as(idx).reshape(-1))
                moe.gate.e_score_correction_bias += a.gamma * torch.sign(cnt.mean() - cnt)
        step += 1
        if step % 50 == 0 or step == 1:
            lv = loss.item()
            ema = lv if ema is None else 0.9 * ema + 0.1 * lv
            hist.append([step, round(time.time() - t_train, 1), lv])
            log("step %5d t %6.1fs loss %.4f gn %.2f lr %.2e T %d B %d mem %.1fG" % (
                step, time.time() - t_train, lv, float(gn), lr, x.shape[1], x.shape[0],
                torch.cuda.max_memory_allocated() / 2**30 if cuda else 0.0))
    train_s = time.time() - t_train
    log("trained %d steps in %.1fs" % (step, train_s))

    # export precision: bf16 trunk, MXFP4 experts; evaluate exactly those weights
    bf16_round_(model)
    quantise_experts_(model)
    # logits of one held-out chat for the export check
    it0 = items[0]
    ids0 = encode_example(tok, it0)
    ids0 = torch.tensor([ids0[0] + ids0[1]], device=dev)
    with torch.no_grad():
        model.eval()
        np.save(os.path.join(a.out, "check_logits.npy"), model(ids0)[0].float().cpu().numpy())

    tensors = k3io.export_tensors(model)
    part, size, parts = {}, 0, 0
    for name in sorted(tensors):
        dt, arr = tensors[name]
        if size + arr.nbytes > 15_000_000 and part:
            np.savez(os.path.join(a.out, "weights-%d.npz" % parts), **part)
            parts, part, size = parts + 1, {}, 0
        part[name + "|" + dt] = arr
        size += arr.nbytes
    np.savez(os.path.join(a.out, "weights-%d.npz" % parts), **part)
    t0 = time.time()
    res = evaluate(model, tok, items, dev, amp_decode=cuda, max_new=a.max_new)
    log("eval %.1fs: overall %.4f nll %.4f" % (time.time() - t0, res["accuracy_overall"], res["nll_per_token"]))
    for t in sorted(res["accuracy"]):
        log("  %-14s acc %.3f nll %.4f" % (t, res["accuracy"][t], res["nll"][t]))
    for li, st in res["expert_load"].items():
        log("  layer %s load share min %.4f max %.4f dead %d" % (li, st["min_share"], st["max_share"], st["dead"]))

    metrics = {"dims": dims, "steps": step, "train_seconds": round(train_s, 1),
               "total_seconds": round(time.time() - t_start, 1), "tokens_per_batch": a.tokens,
               "lr": a.lr, "qat_frac": a.qat_frac, "gamma": a.gamma, "n_examples": len(data),
               "params_trunk": n_trunk, "params_experts": n_exp, "loss_history": hist,
               "device": torch.cuda.get_device_name(0) if cuda else "cpu", "torch": torch.__version__,
               "check_prompt": it0["prompt"], **res}
    with open(os.path.join(a.out, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=1)
    with open(os.path.join(a.out, "log.txt"), "w") as f:
        f.write("\n".join(LOG) + "\n")
    log("done in %.1fs" % (time.time() - t_start))


if __name__ == "__main__":
    main()
