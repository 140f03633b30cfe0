"""PyTorch reference figures for a K3-format checkpoint on an eval file: average NLL per
answer token (overall and per task, fp32, reference reasoning teacher-forced; see
train.evaluate), expert load shares, and with --generate the greedy exact-match accuracy
(fp32, incremental decoding), per task, subtask and scored turn.  Items may carry history,
think and accept (assets/eval/README.md).  This is what `remora eval` is compared against.

usage: python3 evaluate.py MODEL_DIR EVAL.jsonl [--generate] [--limit N] [--skip N] [--tasks a,b]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import k3io  # noqa: E402
import tokenizer as tk  # noqa: E402
from k3model import K3Config, K3Model  # noqa: E402
from train import evaluate, report  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("data")
    ap.add_argument("--generate", action="store_true")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--skip", type=int, default=0, help="start at item N")
    ap.add_argument("--tasks", default=None, help="only these tasks (comma-separated)")
    ap.add_argument("--max-new", type=int, default=300)
    a = ap.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    cfg = K3Config(json.load(open(os.path.join(a.model, "config.json")))["text_config"])
    model = k3io.load_into(K3Model(cfg), k3io.read_checkpoint(a.model), torch.float32).eval()
    tok = tk.Tokenizer.load(a.model)
    items = [json.loads(l) for l in open(a.data)][a.skip:]
    if a.tasks:
        items = [it for it in items if it["task"] in a.tasks.split(",")]
    if a.limit:
        items = items[:a.limit]
    res = evaluate(model, tok, items, torch.device("cpu"), amp_decode=False, decode=a.generate,
                   max_new=a.max_new, log_fn=lambda *x: print(*x, file=sys.stderr, flush=True))
    report(res, lambda *x: print(*x, file=sys.stderr), "model %s" % a.model)
    for li, st in res["expert_load"].items():
        del st["counts"]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
