"""Check that tokenizer.py renders training conversations exactly as the C renderer does
(engine/text/template.c, which `remora serve` uses for a chat request and `remora
tokenize --chat` exposes): tool declarations (an OpenAI `tools` array), assistant tool
calls, tool results, thinking on and off.  For each generated conversation, the whole
conversation and every assistant turn's prompt (the messages before it and the
generation prompt) are rendered by both and compared id for id.  With --serve PORT it also
sends each turn's prompt to a running `remora serve` (max_tokens 1) and compares the
server's prompt_tokens with the number of ids (the server renders the request it is sent,
with its `tools` array, as the same JSON conversation).

Plain Python 3 (and the regex package); exits 1 on the first difference.
usage: python3 check_render.py [--bin build/rel/remora] [--n 60] [--seed 11] [--serve PORT]
"""
import argparse
import json
import os
import random
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_data  # noqa: E402
import tokenizer as tk  # noqa: E402


def c_ids(binary, model, conv):
    r = subprocess.run([binary, "tokenize", "--tokenizer", model, "--chat"], input=json.dumps(conv),
                       capture_output=True, text=True, timeout=60)
    if r.returncode:
        sys.exit("remora tokenize --chat failed: " + r.stderr)
    return json.loads(r.stdout)


def served_prompt_tokens(port, conv):
    body = {"model": "remora-k3-demo", "messages": conv["messages"], "max_tokens": 1,
            "chat_template_kwargs": {"thinking": conv["thinking"]}}
    if conv.get("tools"):
        body["tools"] = conv["tools"]
    req = urllib.request.Request("http://127.0.0.1:%d/v1/chat/completions" % port, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as f:
        return json.load(f)["usage"]["prompt_tokens"]


def main():
    root = os.path.join(HERE, "../..")
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(root, "build/rel/remora"))
    ap.add_argument("--model", default=os.path.join(root, "assets/model"))
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--serve", type=int, default=0)
    a = ap.parse_args()
    tok = tk.Tokenizer.load(a.model)
    rng = random.Random(a.seed)
    n = tools = served = 0
    for i in range(a.n):
        msgs, tl, thinking = gen_data.make_tool_conversation(rng) if i % 2 == 0 else gen_data.conversation_messages(rng)
        tools += bool(tl)
        whole = {"messages": msgs, "thinking": thinking, "add_generation_prompt": False}
        if tl:
            whole["tools"] = tl
        py, _ = tk.encode_training_messages(tok, msgs, thinking, tl)
        if py != c_ids(a.bin, a.model, whole):
            sys.exit("conversation %d differs (thinking %s):\n%s" % (i, thinking, json.dumps(whole)))
        n += 1
        for j, m in enumerate(msgs):
            if m["role"] != "assistant":
                continue
            conv = dict(whole, messages=msgs[:j], add_generation_prompt=True)
            py = tk.encode_segments(tok, tk.conversation_segments(msgs[:j], thinking, True, tl))
            if py != c_ids(a.bin, a.model, conv):
                sys.exit("conversation %d, prompt of message %d differs:\n%s" % (i, j, json.dumps(conv)))
            if a.serve and served < 12:
                got = served_prompt_tokens(a.serve, conv)
                if got != len(py):
                    sys.exit("conversation %d, message %d: the server counted %d prompt tokens, tokenizer.py %d"
                             % (i, j, got, len(py)))
                served += 1
            n += 1
    print("%d renderings identical (%d of %d conversations with tools)%s" % (
        n, tools, a.n, ", %d prompts counted alike by remora serve" % served if a.serve else ""))


if __name__ == "__main__":
    main()
