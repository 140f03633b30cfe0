"""Train the embedded demonstration model (k3model.K3Model at k3io.DEFAULT_DIMS) on the
gen_data.py task mix, quantise its routed experts to MXFP4 with a short quantisation-aware
phase, evaluate it with the dequantised weights and write the checkpoint tensors.

Training data are conversations of 1-4 turns (gen_data.make_conversation), rendered token
for token as the chat renders them (tokenizer.encode_training_conversation): with thinking
on, earlier assistant turns keep their reasoning; with thinking off, no think blocks and
the generation prompt opens the response channel.  Loss only on the assistant parts the
model writes itself (reasoning, answer and closing tags of every such turn).  Expert
balance is auxiliary-loss-free: after every step each MoE layer's e_score_correction_bias
moves by gamma * sign(mean load - load) (DeepSeek-V3).

Outputs in --out: weights-N.npz (checkpoint tensors under their K3 names, "NAME|DTYPE"
keys, split so each file stays under 15 MB; export.py turns them into safetensors shards),
metrics.json (training, accuracy, NLL, expert load), check_logits.npy (fp32 logits of one
held-out chat, for checking the export), log.txt.  With --old-model, metrics.json also holds
"old_model": the same evaluation of an earlier checkpoint.

usage (GPU): python3 train.py --out DIR --tok TOKDIR --heldout heldout.jsonl --minutes 7.5 \
          [--deadline 560] [--old-model ../model]
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
import k3model  # noqa: E402
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
        turns, thinking, reasoned = gen_data.make_conversation(rng, exclude)
        ids, tgt = tk.encode_training_conversation(
            _TOK, [(t["prompt"], t["reasoning"] if r else None, t["reference"]) for t, r in zip(turns, reasoned)],
            thinking)
        out.append((np.array(ids, dtype=np.int16), np.array(tgt, dtype=bool)))
    return out


def generate_async(n, tokdir, exclude, seed, procs):
    """Starts the data workers (forked before CUDA is touched); returns a function that
    waits for and returns the conversations."""
    per = 2000
    jobs = [(seed * 100003 + i, min(per, n - i * per), tokdir, exclude) for i in range((n + per - 1) // per)]
    if procs <= 1:
        parts = [_gen_worker(j) for j in jobs]
        return lambda: [x for p in parts for x in p]
    pool = mp.Pool(procs)
    res = pool.map_async(_gen_worker, jobs)

    def wait():
        parts = res.get()
        pool.close()
        pool.join()
        return [x for p in parts for x in p]
    return wait


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
    for r, (seq, tgt) in enumerate(items):
        ids[r, :len(seq)] = seq
        mask[r, :len(seq) - 1] = tgt[1:]                # labels that are trained assistant tokens
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
# Held-out items (assets/eval/README.md): "prompt", "reference", optional "reasoning",
# "history" (earlier messages, a transcript's lines), "think" (false: thinking off),
# "accept" (other replies scored as right), "task", "subtask", "turn".

def item_think(it):
    return it.get("think", True) is not False


def item_messages(it):
    return list(it.get("history", [])) + [{"role": "user", "content": it["prompt"]}]


def item_prompt_ids(tok, it):
    """What the chat feeds the model for the scored turn: the history, the question and the
    generation prompt, rendered with the item's thinking setting."""
    return tk.encode_segments(tok, tk.conversation_segments(item_messages(it), item_think(it)))


def item_nll_ids(tok, it):
    """The teacher-forced sequence for the NLL and the span of the reference's tokens: the
    chat of item_prompt_ids, then (thinking on) the reference reasoning and the channel
    switch, then the reference answer and the closing tags."""
    think = item_think(it)
    segs = tk.conversation_segments(item_messages(it), think)
    if think:
        r = it.get("reasoning") or ""
        if tk._nonblank(r):
            segs = segs + [(r, False)]
        segs = segs + tk.close_tag("think") + tk.open_tag("response")
    ctx = tk.encode_segments(tok, segs)
    ans = tok.encode(it["reference"])
    rest = tk.encode_segments(tok, tk.close_tag("response") + tk.close_tag("message") + [("<|end_of_msg|>", True)])
    return ctx + ans + rest, (len(ctx), len(ctx) + len(ans))


def response_text(tok, ids, eos, think=True):
    """The answer of generated ids: with thinking on the text between <|open|>response<|sep|>
    and the next <|close|>response<|sep|> (or the end); with thinking off the generation
    starts in the response channel, so from the start."""
    text = tok.decode([i for i in ids if i != eos])
    a = 0
    if think:
        a = text.find("<|open|>response<|sep|>")
        if a < 0:
            return None
        a += len("<|open|>response<|sep|>")
    b = text.find("<|close|>response<|sep|>", a)
    return text[a:b] if b >= 0 else text[a:]


@torch.no_grad()
def greedy(model, prompts, eos, max_new, dev, bs=512, amp=False):
    """Greedy decoding with the model's incremental cache (KDA state, conv inputs, MLA keys
    and values): every row advances one position a step, fed its prompt token while the
    prompt lasts and its own last generated token after.  Prompts are batched by length.
    Returns the generated ids of each prompt (ending with eos when it was reached)."""
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    outs = [None] * len(prompts)
    for s in range(0, len(order), bs):
        idx = order[s:s + bs]
        ps = [prompts[i] for i in idx]
        B = len(ps)
        lens = torch.tensor([len(p) for p in ps], device=dev)
        L = int(lens.max())
        P = torch.zeros(B, L, dtype=torch.long)
        for r, p in enumerate(ps):
            P[r, :len(p)] = torch.tensor(p)
        P = P.to(dev)
        cache = model.new_cache(L + max_new)
        gen = torch.full((B, max_new), -1, dtype=torch.long, device=dev)
        ngen = torch.zeros(B, dtype=torch.long, device=dev)
        done = torch.zeros(B, dtype=torch.bool, device=dev)
        rows = torch.arange(B, device=dev)
        cur = P[:, 0]
        for t in range(L + max_new - 1):
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
                logits = model(cur[:, None], cache=cache)[:, -1]
            nxt = logits.float().argmax(-1)
            in_prompt = (t + 1) < lens
            take = (~in_prompt) & (~done)
            gen[rows, ngen.clamp(max=max_new - 1)] = torch.where(take, nxt, gen[rows, ngen.clamp(max=max_new - 1)])
            ngen = ngen + take.long()
            done = done | (take & ((nxt == eos) | (ngen >= max_new)))
            if t % 8 == 0 and t + 1 >= L and bool(done.all()):
                break
            cur = torch.where(in_prompt, P[:, min(t + 1, L - 1)], nxt)
        gen, ngen = gen.cpu(), ngen.cpu()
        for r, i in enumerate(idx):
            outs[i] = gen[r, :int(ngen[r])].tolist()
    return outs


def _ratio(d):
    return {k: (c / n if n else None) for k, (c, n) in sorted(d.items())}


@torch.no_grad()
def evaluate(model, tok, items, dev, amp_decode=False, max_new=300, bs=512, decode=True, log_fn=None):
    """Greedy exact match per task (skipped unless decode), NLL of the reference answers
    and expert loads.  Exact match: the answer equals "reference" or one of "accept";
    "strict" counts "reference" only.  Also per subtask (the question's task for multi-turn
    and no-think items, the prompt kind for meta items) and per scored turn.  NLL: each
    item's chat with the reference reasoning (thinking on); the target is the reference
    answer's tokens (teacher-forced, fp32), per token (sum of NLL / number of tokens)."""
    eos, pad = tok.sid("<|end_of_msg|>"), tok.sid("[PAD]")
    model.eval()
    compiled, k3model.weighted_situ = k3model.weighted_situ, k3model._weighted_situ   # no recompiling for eval shapes
    per, strict, per_sub, per_turn = {}, {}, {}, {}
    examples = []
    t0 = time.time()
    if decode:
        prompts = [item_prompt_ids(tok, it) for it in items]
        gens = greedy(model, prompts, eos, max_new, dev, bs, amp_decode)
        for it, g in zip(items, gens):
            got = response_text(tok, g, eos, item_think(it))
            ok = got == it["reference"] or got in it.get("accept", [])
            task = it["task"]
            for d, key, v in ((per, task, ok), (strict, task, got == it["reference"]),
                              (per_sub, "%s/%s" % (task, it.get("subtask", "-")), ok),
                              (per_turn, "%s/turn%d" % (task, it.get("turn", 1)), ok)):
                d.setdefault(key, [0, 0])
                d[key][0] += v
                d[key][1] += 1
            if not ok and len(examples) < 60:
                examples.append({"task": task, "subtask": it.get("subtask"), "turn": it.get("turn", 1),
                                 "prompt": it["prompt"], "reference": it["reference"], "got": got})
        if log_fn:
            log_fn("greedy decoding of %d items: %.1fs" % (len(items), time.time() - t0))
    orig = [t for t in per if t in gen_data.TASKS]
    res = {"accuracy": _ratio(per), "accuracy_strict": _ratio(strict), "accuracy_subtask": _ratio(per_sub),
           "accuracy_turn": _ratio(per_turn),
           "accuracy_overall": (sum(c for c, _ in per.values()) / sum(n for _, n in per.values())) if per else None,
           "accuracy_original": (sum(per[t][0] for t in orig) / sum(per[t][1] for t in orig)) if orig else None,
           "correct": {t: per[t][0] for t in per}, "items_per_task": {t: per[t][1] for t in per}}

    # NLL of the reference answers (teacher-forced reasoning) and expert loads, fp32
    t0 = time.time()
    nll_tok, nll_n = {}, {}
    loads = {li: torch.zeros(moe.E, dtype=torch.long) for li, moe in model.moe_layers()}
    seqs_all = [item_nll_ids(tok, it) for it in items]
    order = sorted(range(len(items)), key=lambda i: len(seqs_all[i][0]))
    for s in range(0, len(order), 64):
        chunk = order[s:s + 64]
        seqs = [seqs_all[i][0] for i in chunk]
        T = max(len(x) for x in seqs)
        ids = torch.full((len(seqs), T), pad, dtype=torch.long)
        for r, x in enumerate(seqs):
            ids[r, :len(x)] = torch.tensor(x)
        logits = model(ids.to(dev)).float()
        lp = torch.log_softmax(logits, -1)
        for r, i in enumerate(chunk):
            a, b = seqs_all[i][1]
            task = items[i]["task"]
            tgt = ids[r, a:b].to(dev)
            nll = -lp[r, a - 1:b - 1].gather(-1, tgt[:, None]).sum().item()
            nll_tok[task] = nll_tok.get(task, 0.0) + nll
            nll_n[task] = nll_n.get(task, 0) + (b - a)
        valid = torch.zeros(len(seqs), T, dtype=torch.bool)
        for r, x in enumerate(seqs):
            valid[r, :len(x)] = True
        valid = valid.reshape(-1).to(dev)
        for li, moe in model.moe_layers():
            idx = moe.last[1][valid]
            loads[li] += torch.bincount(idx.reshape(-1), minlength=moe.E).cpu()
    res["nll"] = {t: nll_tok[t] / nll_n[t] for t in sorted(nll_tok)}
    res["nll_per_token"] = sum(nll_tok.values()) / sum(nll_n.values())
    on = [t for t in nll_tok if t in gen_data.TASKS]
    res["nll_original"] = sum(nll_tok[t] for t in on) / sum(nll_n[t] for t in on) if on else None
    load_stats = {}
    for li, c in loads.items():
        share = c.double() / c.sum()
        load_stats[str(li)] = {"min_share": float(share.min()), "max_share": float(share.max()),
                               "mean_share": float(share.mean()), "dead": int((c == 0).sum()),
                               "counts": c.tolist()}
    if log_fn:
        log_fn("NLL and expert load of %d items: %.1fs" % (len(items), time.time() - t0))
    model.train()
    k3model.weighted_situ = compiled
    res.update({"n_items": len(items), "expert_load": load_stats, "failures": examples})
    return res


def report(res, log_fn, title):
    acc = res["accuracy"]
    log_fn("%s: overall %s, original 14 tasks %s, nll %.4f (original %s)" % (
        title, "%.4f" % res["accuracy_overall"] if res["accuracy_overall"] is not None else "-",
        "%.4f" % res["accuracy_original"] if res["accuracy_original"] is not None else "-",
        res["nll_per_token"], "%.4f" % res["nll_original"] if res["nll_original"] is not None else "-"))
    for t in res["nll"]:
        a = acc.get(t)
        st = res["accuracy_strict"].get(t)
        log_fn("  %-20s n %3s acc %s%s nll %.4f" % (
            t, res["items_per_task"].get(t, "-"), "%.3f" % a if a is not None else "  -  ",
            " (strict %.3f)" % st if st is not None and st != a else "", res["nll"][t]))
    for k, v in res["accuracy_turn"].items():
        if not k.endswith("turn1"):
            log_fn("  %-28s acc %.3f" % (k, v))
    for k, v in res["accuracy_subtask"].items():
        if not k.endswith("/-"):
            log_fn("  %-34s acc %.3f" % (k, v))
    for li, st in res["expert_load"].items():
        log_fn("  layer %s load share min %.4f max %.4f dead %d" % (li, st["min_share"], st["max_share"], st["dead"]))


# ----------------------------------------------------------------------------- main

def write_weights(model, out):
    tensors = k3io.export_tensors(model)
    part, size, parts = {}, 0, 0
    for name in sorted(tensors):
        dt, arr = tensors[name]
        if size + arr.nbytes > 15_000_000 and part:
            np.savez(os.path.join(out, "weights-%d.npz" % parts), **part)
            parts, part, size = parts + 1, {}, 0
        part[name + "|" + dt] = arr
        size += arr.nbytes
    np.savez(os.path.join(out, "weights-%d.npz" % parts), **part)
    return parts + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tok", required=True)
    ap.add_argument("--heldout", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dims", default=None, help="JSON overriding k3io.DEFAULT_DIMS")
    ap.add_argument("--minutes", type=float, default=7.5, help="main training time")
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds from the start by which everything should be done: training is "
                         "shortened so that --reserve seconds remain for export and evaluation")
    ap.add_argument("--reserve", type=float, default=75)
    ap.add_argument("--qat-frac", type=float, default=0.15, help="final fraction of time with MXFP4 fake quant")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--tokens", type=int, default=32768, help="padded tokens per batch")
    ap.add_argument("--n-examples", type=int, default=220000, help="conversations to generate")
    ap.add_argument("--procs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--gamma", type=float, default=1e-3, help="bias update speed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-limit", type=int, default=0)
    ap.add_argument("--max-new", type=int, default=300, help="greedy decoding limit")
    ap.add_argument("--old-model", default=None, help="also evaluate this checkpoint (metrics.json: old_model)")
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
    all_items = [json.loads(l) for l in open(a.heldout)]
    items = all_items
    if a.eval_limit:
        items = items[::max(1, len(items) // a.eval_limit)][:a.eval_limit]
    exclude = gen_data.all_prompts(all_items)

    t0 = time.time()
    wait_data = generate_async(a.n_examples, a.tok, exclude, a.seed, a.procs)   # forks before CUDA
    if cuda:
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
    data = wait_data()
    lens = np.array([len(x[0]) for x in data])
    ntgt = sum(int(x[1].sum()) for x in data)
    log("data: %d conversations, %.1f tokens mean, %d max, %.1f%% target tokens, %.1fs" % (
        len(data), lens.mean(), lens.max(), 100.0 * ntgt / lens.sum(), time.time() - t0))
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "conv1d" not in n]
    nodecay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "conv1d" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": nodecay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8, **({"fused": True} if cuda else {}))
    pad = tok.sid("[PAD]")
    it = batch_iter(data, a.tokens, pad, np.random.default_rng(a.seed))
    budget = a.minutes * 60
    if a.deadline:
        budget = min(budget, a.deadline - (time.time() - t_start) - a.reserve)
    log("training budget %.1fs (started %.1fs after launch)" % (budget, time.time() - t_start))
    warm = 100
    step, t_train, ema, qat_on = 0, time.time(), None, False
    hist = []
    seen_tokens = 0
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
        seen_tokens += x.numel()
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
    log("trained %d steps in %.1fs (%.1fM padded tokens)" % (step, train_s, seen_tokens / 1e6))

    # export precision: bf16 trunk, MXFP4 experts; evaluate exactly those weights
    bf16_round_(model)
    quantise_experts_(model)
    # logits of one held-out chat for the export check
    it0 = all_items[0]
    ids0 = encode_example(tok, it0)
    ids0 = torch.tensor([ids0[0] + ids0[1]], device=dev)
    with torch.no_grad():
        model.eval()
        np.save(os.path.join(a.out, "check_logits.npy"), model(ids0)[0].float().cpu().numpy())
    nparts = write_weights(model, a.out)
    metrics = {"dims": dims, "steps": step, "train_seconds": round(train_s, 1), "tokens_per_batch": a.tokens,
               "padded_tokens_seen": seen_tokens, "lr": a.lr, "qat_frac": a.qat_frac, "gamma": a.gamma,
               "n_conversations": len(data), "conversation_tokens_mean": float(lens.mean()),
               "params_trunk": n_trunk, "params_experts": n_exp, "loss_history": hist,
               "device": torch.cuda.get_device_name(0) if cuda else "cpu", "torch": torch.__version__,
               "check_prompt": it0["prompt"], "decode": "greedy, fp32, incremental cache"}

    def save():
        with open(os.path.join(a.out, "metrics.json"), "w") as f:
            json.dump(metrics, f, indent=1)
        with open(os.path.join(a.out, "log.txt"), "w") as f:
            f.write("\n".join(LOG) + "\n")
    save()                  # training figures first, in case evaluation runs out of time
    log("weights in %d files, %.1fs after launch" % (nparts, time.time() - t_start))
    res = evaluate(model, tok, items, dev, amp_decode=False, max_new=a.max_new, log_fn=log)
    report(res, log, "new model")
    metrics.update(res)
    metrics["total_seconds"] = round(time.time() - t_start, 1)
    save()

    if a.old_model:
        del opt
        ocfg = K3Config(json.load(open(os.path.join(a.old_model, "config.json")))["text_config"])
        old = k3io.load_into(K3Model(ocfg), k3io.read_checkpoint(a.old_model), torch.float32).to(dev).eval()
        ores = evaluate(old, tok, items, dev, amp_decode=False, max_new=a.max_new, log_fn=log)
        report(ores, log, "old model (%s)" % a.old_model)
        ores["model"] = a.old_model
        metrics["old_model"] = ores
        save()
    log("done in %.1fs" % (time.time() - t_start))
    metrics["total_seconds"] = round(time.time() - t_start, 1)
    save()


if __name__ == "__main__":
    main()
