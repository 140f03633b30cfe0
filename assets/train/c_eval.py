"""C-engine figures for the held-out items that `remora eval` cannot score yet (history,
think, accept; see assets/eval/README.md), until app/cmd_eval.c reads those fields:

  - no-think items (single turn): `remora eval --no-think` on them;
  - meta items: `remora eval` on them, then the family rule (reference or one of accept)
    applied to the answers it prints;
  - multi-turn items: the history written as a transcript, then `remora run --chat
    --transcript F [--no-think] --prompt PROMPT`, the chat's own path; the answer on
    stdout must equal the reference.

Items with tools (tool_call, tool_answer, ...) are left out: remora eval and remora run
have no tools; tests/sh/serve_agents.sh runs a tool round trip through remora serve.

Plain Python 3, no packages.  Takes a while on a small CPU (one model load per multi-turn
item).  The original items (no history/think/accept) are scored by
`remora eval --limit 350` itself.

usage: python3 c_eval.py [--bin build/rel/remora] [--model assets/model]
                         [--data assets/eval/heldout.jsonl] [--limit-per-task N]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

LINE = re.compile(r"^\s*\d+ (\S+)\s+(ok  |MISS)  (.*)$")


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(root, "build/rel/remora"))
    ap.add_argument("--model", default=os.path.join(root, "assets/model"))
    ap.add_argument("--data", default=os.path.join(root, "assets/eval/heldout.jsonl"))
    ap.add_argument("--max-new", default="300")
    ap.add_argument("--limit-per-task", type=int, default=0)
    a = ap.parse_args()
    items = [json.loads(l) for l in open(a.data)]
    # tool items ("tools") need a server's request rendering: tests/sh/serve_agents.sh
    # runs the round trip through remora serve on the embedded model
    new = [it for it in items if ("history" in it or "think" in it or "accept" in it) and "tools" not in it]
    if a.limit_per_task:
        seen, keep = {}, []
        for it in new:
            seen[it["task"]] = seen.get(it["task"], 0) + 1
            if seen[it["task"]] <= a.limit_per_task:
                keep.append(it)
        new = keep
    tally, misses = {}, []

    def score(it, got, key=None):
        ok = got == it["reference"] or got in it.get("accept", [])
        for k in [it["task"]] + ([key] if key else []):
            c = tally.setdefault(k, [0, 0, 0])
            c[0] += ok
            c[1] += got == it["reference"]
            c[2] += 1
        if not ok:
            misses.append({"task": it["task"], "subtask": it.get("subtask"), "prompt": it["prompt"],
                           "reference": it["reference"], "got": got})

    with tempfile.TemporaryDirectory() as tmp:
        for name, opts in (("single_no_think", ["--no-think"]), ("single_think", [])):
            sel = [it for it in new if "history" not in it and (it.get("think", True) is False) == bool(opts)]
            if not sel:
                continue
            path = os.path.join(tmp, name + ".jsonl")
            with open(path, "w") as f:
                for it in sel:
                    f.write(json.dumps(it) + "\n")
            r = subprocess.run([a.bin, "eval", "--model", a.model, "--data", path, "--max-new", a.max_new] + opts,
                               capture_output=True, text=True)
            if r.returncode:
                sys.exit("remora eval failed: " + r.stderr[-2000:])
            lines = [m for m in (LINE.match(l) for l in r.stderr.split("\n")) if m]
            assert len(lines) == len(sel), (len(lines), len(sel))
            for it, m in zip(sel, lines):
                score(it, m.group(3))
        for k, it in enumerate(it for it in new if "history" in it):
            tr = os.path.join(tmp, "t%d.jsonl" % k)
            with open(tr, "w") as f:
                for msg in it["history"]:
                    f.write(json.dumps(msg) + "\n")
            think = "--think" if it.get("think", True) is not False else "--no-think"
            r = subprocess.run([a.bin, "run", "--model", a.model, "--chat", think, "--max-new", a.max_new,
                                "--prompt", it["prompt"], "--transcript", tr], capture_output=True, text=True)
            if r.returncode:
                sys.exit("remora run failed: " + r.stderr[-2000:])
            got = r.stdout[:-1] if r.stdout.endswith("\n") else r.stdout
            score(it, got, "%s/turn%d" % (it["task"], it.get("turn", 0)))
    print("%-28s %9s %9s" % ("task", "accuracy", "strict"))
    for k in sorted(tally):
        c, s, n = tally[k]
        print("%-28s %3d/%-3d %5.1f%% %5.1f%%" % (k, c, n, 100.0 * c / n, 100.0 * s / n))
    print(json.dumps({"tasks": {k: {"items": n, "accuracy": c / n, "strict": s / n} for k, (c, s, n) in tally.items()},
                      "misses": misses}))


if __name__ == "__main__":
    main()
