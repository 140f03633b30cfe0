"""The model card's figures (assets/model/README.md, "Measured quality" and "Expert load")
from a train.py metrics.json with --old-model: the per-task table, old next to new, the
scored-turn rows, the thinking-off table by the question's task, the goals line, the
misses and the expert-load table, as Markdown, so that no figure is copied by hand.

usage: python3 card_table.py RUN/metrics.json [--heldout heldout.jsonl heldout_tools.jsonl]
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_data  # noqa: E402

TASK_ROWS = list(gen_data.TASKS)
NEW_ROWS = [("multi_turn", "multi_turn (turns 2-4, thinking on)"),
            ("multi_turn_no_think", "multi_turn_no_think (turns 2-4)"),
            ("no_think", "no_think (single turn)"), ("greeting", "greeting"), ("about_self", "about_self"),
            ("out_of_scope", "out_of_scope")]
TOOL_ROWS = ["tool_call", "tool_call_no_think", "tool_answer", "tool_answer_no_think", "tool_no_call",
             "tools_no_calculator"]
# the goals of issue #27's phase 4 (BRIEF): task -> minimum accuracy
GOALS = [("multi_turn_no_think", 0.95), ("no_think", 0.95), ("reverse", 0.95), ("uppercase", 0.95),
         ("greeting", 1.0), ("about_self", 1.0), ("sort_numbers", 1.0)]


def pct(x):
    return "%.1f %%" % (100 * x) if abs(100 * x - round(100 * x)) > 1e-9 else "%d %%" % round(100 * x)


def acc_cell(res, task):
    a, s = res["accuracy"].get(task), res["accuracy_strict"].get(task)
    if a is None:
        return "-"
    return pct(a) + (" (strict %s)" % pct(s) if s is not None and abs(s - a) > 1e-12 else "")


def count(res, tasks):
    c = sum(res["correct"].get(t, 0) for t in tasks)
    n = sum(res["items_per_task"].get(t, 0) for t in tasks)
    return c, n


def total_cell(res, tasks):
    c, n = count(res, tasks)
    return "**%s** (%d)" % (pct(c / n), c) if n else "-"


def nll_cell(res, tasks):
    n = sum(res["items_per_task"].get(t, 0) for t in tasks)
    return "%.4f" % res["nll"][tasks[0]] if len(tasks) == 1 and tasks[0] in res["nll"] else "" if n else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metrics")
    ap.add_argument("--heldout", nargs="+", default=[os.path.join(HERE, "../eval/heldout.jsonl"),
                                                     os.path.join(HERE, "../eval/heldout_tools.jsonl")])
    a = ap.parse_args()
    new = json.load(open(a.metrics))
    old = new["old_model"]
    items = [json.loads(line) for fn in a.heldout for line in open(fn)]
    n_sub = {}
    for it in items:
        k = "%s/%s" % (it["task"], it.get("subtask", "-"))
        n_sub[k] = n_sub.get(k, 0) + 1
    out = print

    out("| task | items | old | new | NLL/token old | new |")
    out("|---|---|---|---|---|---|")
    for t in TASK_ROWS:
        out("| %s | %d | %s | %s | %s | %s |" % (t, new["items_per_task"][t], acc_cell(old, t), acc_cell(new, t),
                                               nll_cell(old, [t]), nll_cell(new, [t])))
    c, n = count(new, TASK_ROWS)
    out("| **original %d** | %d | %s | %s | %.4f | %.4f |" % (n, n, total_cell(old, TASK_ROWS),
                                                           total_cell(new, TASK_ROWS), old["nll_original"],
                                                           new["nll_original"]))
    for t, label in NEW_ROWS:
        out("| %s | %d | %s | %s | %s | %s |" % (label, new["items_per_task"][t], acc_cell(old, t),
                                               acc_cell(new, t), nll_cell(old, [t]), nll_cell(new, [t])))
        if t.startswith("multi_turn"):
            turns = ["%s/turn%d" % (t, k) for k in (2, 3, 4)]
            cells = [" / ".join("%g" % round(100 * r["accuracy_turn"][k], 1) for k in turns) + " %"
                     for r in (old, new)]
            out("| - turn 2 / 3 / 4 | %d each | %s | %s | | |" % (new["items_per_task"][t] // 3, cells[0], cells[1]))
    first = TASK_ROWS + [t for t, _ in NEW_ROWS]
    c, n = count(new, first)
    out("| **all %d of heldout.jsonl** | %d | %s | %s | | |" % (n, n, total_cell(old, first), total_cell(new, first)))
    for t in TOOL_ROWS:
        out("| %s | %d | %s | %s | %s | %s |" % (t, new["items_per_task"][t], acc_cell(old, t), acc_cell(new, t),
                                               nll_cell(old, [t]), nll_cell(new, [t])))
    c, n = count(new, TOOL_ROWS)
    out("| **%d of heldout_tools.jsonl** | %d | %s | %s | | |" % (n, n, total_cell(old, TOOL_ROWS),
                                                               total_cell(new, TOOL_ROWS)))
    out("| **all %d** | %d | **%s** | **%s** | %.4f | %.4f |" % (
        new["n_items"], new["n_items"], pct(old["accuracy_overall"]), pct(new["accuracy_overall"]),
        old["nll_per_token"], new["nll_per_token"]))

    out("")
    out("| task | no_think old | new | multi_turn_no_think old | new |")
    out("|---|---|---|---|---|")
    for t in TASK_ROWS:
        cells = []
        for fam in ("no_think", "multi_turn_no_think"):
            k = "%s/%s" % (fam, t)
            for r in (old, new):
                cells.append("%d/%d" % (round(r["accuracy_subtask"][k] * n_sub[k]), n_sub[k]))
        out("| %s | %s |" % (t, " | ".join(cells)))

    out("")
    goals = []
    for t, g in GOALS:
        c, n = count(new, [t])
        goals.append("%s %s (%d/%d, goal %s%s)" % (t, pct(c / n), c, n, pct(g), "" if c / n >= g - 1e-12 else
                                                  ": **not met**"))
    c, n = count(new, TOOL_ROWS)
    goals.append("tools %d/%d" % (c, n))
    c, n = count(new, TASK_ROWS)
    goals.append("original %d %s (goal 99.7 %%%s)" % (n, pct(c / n), "" if c / n >= 0.997 - 1e-12 else
                                                     ": **not met**"))
    out("Goals: " + "; ".join(goals) + ".")
    for t in ("greeting", "about_self", "out_of_scope"):
        k = t + "/free"
        if k in new["accuracy_subtask"]:
            out("%s, hand-written prompts: old %d/%d, new %d/%d" % (
                t, round(old["accuracy_subtask"][k] * n_sub[k]), n_sub[k],
                round(new["accuracy_subtask"][k] * n_sub[k]), n_sub[k]))

    out("")
    out("Misses of the new model (%d%s):" % (len(new["failures"]), ", the first 60" if len(new["failures"]) >= 60
                                             else ""))
    for f in new["failures"]:
        out("- %s%s: `%s` -> `%s` (reference `%s`)" % (
            f["task"], "/" + f["subtask"] if f.get("subtask") else "", f["prompt"], f["got"], f["reference"]))

    out("")
    out("| MoE layer (0-based) | min share | max share | dead |")
    out("|---|---|---|---|")
    for li, st in sorted(new["expert_load"].items(), key=lambda kv: int(kv[0])):
        out("| %s | %.2f %% | %.2f %% | %d |" % (li, 100 * st["min_share"], 100 * st["max_share"], st["dead"]))
    ph = new["phases"][-1]
    out("")
    out("Training: %d steps in %.0f s, %dk conversations (mix %s, seed %d), lr %g, %d warm-up steps, QAT from step "
        "%s, %.1fM padded tokens; whole train.py run %.1f s." % (
            ph["steps"], ph["seconds"], ph["conversations"] // 1000, ph.get("mix", "base"), ph["seed"], ph["lr"],
            ph["warmup"], ph["qat_from_step"], ph["padded_tokens"] / 1e6, new["total_seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
