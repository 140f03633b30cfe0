"""Kimi-format tokenizer (tiktoken.model ranks + tokenizer_config.json specials) in plain
Python: encoding with Kimi's pre-tokenisation pattern and rank-ordered byte-pair merging,
decoding, K3 XTML chat rendering, and training of our small BPE vocabulary.

The pattern is Kimi's pat_str (fixtures README section 1.3) with the fancy-regex class
intersections `[...&&[^\\p{Han}]]` rewritten as a negative lookahead on Han before the
class, which matches exactly the same single characters.
"""
import base64
import collections
import json
import os

import regex

_UPPER = r"(?:(?!\p{Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])"
_LOWER = r"(?:(?!\p{Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])"
_CONTR = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
PAT_STR = "|".join([
    r"[\p{Han}]+",
    r"[^\r\n\p{L}\p{N}]?" + _UPPER + "*" + _LOWER + "+" + _CONTR,
    r"[^\r\n\p{L}\p{N}]?" + _UPPER + "+" + _LOWER + "*" + _CONTR,
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])
PAT = regex.compile(PAT_STR)

N_SPECIAL = 256


def bpe(piece, ranks):
    """Rank-ordered byte-pair merging of one pre-tokenised piece (bytes) -> ids."""
    if piece in ranks:
        return [ranks[piece]]
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best, bi = None, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best):
                best, bi = r, i
        if best is None:
            break
        parts[bi:bi + 2] = [parts[bi] + parts[bi + 1]]
    return [ranks[p] for p in parts]


class Tokenizer:
    def __init__(self, ranks, specials):
        """ranks: {bytes: id}; specials: {string: id}."""
        self.ranks = ranks
        self.inv = {v: k for k, v in ranks.items()}
        self.specials = specials
        self.inv_special = {v: k for k, v in specials.items()}
        self.special_re = regex.compile("|".join(regex.escape(s) for s in
                                                 sorted(specials, key=len, reverse=True)))
        self.cache = {}

    @classmethod
    def load(cls, d):
        ranks = {}
        for line in open(os.path.join(d, "tiktoken.model"), "rb"):
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
        n = len(ranks)
        cfg = json.load(open(os.path.join(d, "tokenizer_config.json")))
        named = {int(i): v["content"] for i, v in cfg["added_tokens_decoder"].items()}
        specials = {named.get(i, "<|reserved_token_%d|>" % i): i for i in range(n, n + N_SPECIAL + 2)}
        return cls(ranks, specials)

    def encode_ordinary(self, text):
        out = []
        for m in PAT.finditer(text):
            piece = m.group().encode("utf-8")
            ids = self.cache.get(piece)
            if ids is None:
                ids = bpe(piece, self.ranks)
                if len(self.cache) < 200000:
                    self.cache[piece] = ids
            out.extend(ids)
        return out

    def encode(self, text, allow_special=False):
        if not allow_special:
            return self.encode_ordinary(text)
        out, pos = [], 0
        for m in self.special_re.finditer(text):
            out.extend(self.encode_ordinary(text[pos:m.start()]))
            out.append(self.specials[m.group()])
            pos = m.end()
        out.extend(self.encode_ordinary(text[pos:]))
        return out

    def decode(self, ids):
        b = b"".join(self.inv[i] if i in self.inv else self.inv_special[i].encode() for i in ids)
        return b.decode("utf-8", errors="replace")

    def sid(self, name):
        return self.specials[name]


# ----------------------------------------------------------------------------- K3 chat

def open_tag(tag, attrs=()):
    segs = [("<|open|>", True), (tag, False)]
    for k, v in attrs:
        segs += [(" " + k, False), ('="', False), (v.replace("&", "&amp;").replace('"', "&quot;"), False), ('"', False)]
    return segs + [("<|sep|>", True)]


def close_tag(tag):
    return [("<|close|>", True), (tag, False), ("<|sep|>", True)]


def user_segments(text):
    return open_tag("message", [("role", "user")]) + [(text, False)] + close_tag("message") + [("<|end_of_msg|>", True)]


def gen_prompt_segments():
    """Assistant generation prompt with thinking on."""
    return open_tag("message", [("role", "assistant")]) + open_tag("think")


def assistant_tail_segments(reasoning, answer):
    """What the model writes after the generation prompt."""
    return ([(reasoning, False)] + close_tag("think") + open_tag("response") + [(answer, False)]
            + close_tag("response") + close_tag("message") + [("<|end_of_msg|>", True)])


def gen_prompt_segments_mode(thinking):
    """Generation prompt: thinking on opens the think channel, thinking off the response
    channel (engine/chat.c render_xtml)."""
    return open_tag("message", [("role", "assistant")]) + open_tag("think" if thinking else "response")


def _nonblank(s):
    return bool(s) and not s.isspace()


TOOLS_HEAD = "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n"


def system_segments(type_, body):
    """An internal system message (template.c internal_system)."""
    return open_tag("message", [("role", "system"), ("type", type_)]) + [(body, False)] + close_tag("message") \
        + [("<|end_of_msg|>", True)]


def tool_declare_segments(tools):
    """The tools array as remora serve renders a request's `tools` (template.c
    tool_declare): json.dumps(tools, ensure_ascii=False), compact separators, keys sorted."""
    return system_segments("tool-declare", TOOLS_HEAD + json.dumps(
        tools, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n```")


def _xtml_type(v):
    return "boolean" if isinstance(v, bool) else "null" if v is None else "number" \
        if isinstance(v, (int, float)) else "string" if isinstance(v, str) else "object" \
        if isinstance(v, dict) else "array"


def tool_calls_segments(calls):
    """An assistant message's tool calls (template.c tool_calls_xtml): a tools block, one
    call per entry with its 1-based index, one typed argument per key (strings raw, other
    values as json.dumps)."""
    segs = open_tag("tools")
    for i, tc in enumerate(calls):
        fn = tc.get("function", tc)
        args = fn.get("arguments")
        if isinstance(args, str):
            args = json.loads(args) if args.strip() else {}
        segs += open_tag("call", [("tool", fn["name"]), ("index", str(i + 1))])
        for k, v in (args or {}).items():
            segs += open_tag("argument", [("key", k), ("type", _xtml_type(v))])
            segs += [(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False), False)]
            segs += close_tag("argument")
        segs += close_tag("call")
    return segs + close_tag("tools")


def assistant_message_segments(reasoning, content, thinking, tool_calls=None):
    """One assistant message of the history, as engine/chat.c (assistant_xtml) renders it:
    with thinking on, a think block holding reasoning_content (empty when there is none or
    it is blank) before the response; with thinking off, no think block at all; then the
    tool calls, if any."""
    segs = open_tag("message", [("role", "assistant")])
    if thinking:
        segs += open_tag("think")
        if reasoning is not None and _nonblank(reasoning):
            segs += [(reasoning, False)]
        segs += close_tag("think")
    segs += open_tag("response") + [(content or "", False)] + close_tag("response")
    if tool_calls:
        segs += tool_calls_segments(tool_calls)
    return segs + close_tag("message") + [("<|end_of_msg|>", True)]


def message_segments(messages, thinking):
    """Each message's segments, in order, as the chat and remora serve render them: a tool
    message names the tool of the call it answers (by tool_call_id, else in order) and its
    index among the results since the last assistant message."""
    out, calls, k = [], [], 0
    for m in messages:
        if m["role"] == "user":
            out.append(user_segments(m["content"]))
        elif m["role"] == "assistant":
            out.append(assistant_message_segments(m.get("reasoning_content"), m["content"], thinking,
                                                  m.get("tool_calls")))
            calls, k = m.get("tool_calls") or [], 0
        elif m["role"] == "tool":
            k += 1
            by_id = [c for c in calls if c.get("id") == m.get("tool_call_id")]
            c = by_id[0] if by_id else calls[k - 1]
            out.append(open_tag("message", [("role", "tool"), ("tool", c["function"]["name"]), ("index", str(k))])
                       + [(m["content"], False)] + close_tag("message") + [("<|end_of_msg|>", True)])
        else:
            raise ValueError("role %r" % m["role"])
    return out


def conversation_segments(messages, thinking, add_generation_prompt=True, tools=None):
    """A conversation of user, assistant ({"role", "content", "reasoning_content"?,
    "tool_calls"?}) and tool messages: the tools declaration when there are tools (no
    other system message), the messages (message_segments), then the generation prompt."""
    segs = tool_declare_segments(tools) if tools else []
    for ms in message_segments(messages, thinking):
        segs += ms
    if add_generation_prompt:
        segs += gen_prompt_segments_mode(thinking)
    return segs


def encode_training_messages(tok, messages, thinking, tools=None):
    """Token ids of a whole conversation (conversation_segments without a generation
    prompt) and, per token, whether it is a training target: every assistant message's
    part after the generation prompt that the model would itself write in this rendering
    -- with thinking off every assistant message; with thinking on those with reasoning
    (one answered with thinking off shows an empty think block and is context only)."""
    ids = encode_segments(tok, tool_declare_segments(tools)) if tools else []
    tgt = [False] * len(ids)
    gp = encode_segments(tok, gen_prompt_segments_mode(thinking))
    for m, segs in zip(messages, message_segments(messages, thinking)):
        part = encode_segments(tok, segs)
        ids += part
        if m["role"] == "assistant":
            assert part[:len(gp)] == gp
            r = m.get("reasoning_content")
            train = (not thinking) or (r is not None and _nonblank(r))
            tgt += [False] * len(gp) + [train] * (len(part) - len(gp))
        else:
            tgt += [False] * len(part)
    return ids, tgt


def encode_training_conversation(tok, turns, thinking):
    """encode_training_messages for turns [(prompt, reasoning or None, answer)]; reasoning
    None means the turn was answered with thinking off.  The chat keeps each assistant turn
    with its reasoning (engine/session.c) and renders the history with the current
    thinking setting, so the tokens of turn k are exactly what the chat feeds the model at
    turn k."""
    msgs = []
    for prompt, reasoning, answer in turns:
        msgs.append({"role": "user", "content": prompt})
        msgs.append({"role": "assistant", "content": answer, "reasoning_content": reasoning})
    return encode_training_messages(tok, msgs, thinking)


def encode_segments(tok, segs):
    out = []
    for text, control in segs:
        out.extend(tok.encode(text, allow_special=control))
    return out


# ----------------------------------------------------------------------------- training

def train_bpe(texts, n_ranks, allow_pair=lambda a, b: True):
    """Byte-level BPE on the pre-tokenised pieces of texts: repeatedly merge the most
    frequent adjacent pair (ties: the smaller byte string pair) until n_ranks tokens exist.
    allow_pair(a, b) may forbid merges (we forbid digits so numbers stay one digit a token).
    Returns the list of token byte strings in rank order (0..255 the single bytes)."""
    counts = collections.Counter()
    for t in texts:
        for m in PAT.finditer(t):
            counts[m.group().encode("utf-8")] += 1
    words = [[bytes([c]) for c in w] for w in counts]
    freq = list(counts.values())
    vocab = [bytes([i]) for i in range(256)]
    known = set(vocab)
    pairs = collections.Counter()
    where = collections.defaultdict(set)
    for wi, w in enumerate(words):
        for i in range(len(w) - 1):
            pairs[(w[i], w[i + 1])] += freq[wi]
            where[(w[i], w[i + 1])].add(wi)
    while len(vocab) < n_ranks:
        best = None
        for p, c in pairs.items():
            if c <= 0 or not allow_pair(*p) or p[0] + p[1] in known:
                continue
            if best is None or c > best[1] or (c == best[1] and p < best[0]):
                best = (p, c)
        if best is None:
            break
        (a, b), _ = best
        new = a + b
        vocab.append(new)
        known.add(new)
        for wi in list(where[(a, b)]):
            w = words[wi]
            for i in range(len(w) - 1):
                pairs[(w[i], w[i + 1])] -= freq[wi]
            j, nw = 0, []
            while j < len(w):
                if j < len(w) - 1 and w[j] == a and w[j + 1] == b:
                    nw.append(new)
                    j += 2
                else:
                    nw.append(w[j])
                    j += 1
            words[wi] = nw
            for i in range(len(nw) - 1):
                pairs[(nw[i], nw[i + 1])] += freq[wi]
                where[(nw[i], nw[i + 1])].add(wi)
        del pairs[(a, b)]
    return vocab


def write_tokenizer(d, vocab, fixture_config):
    """Write tiktoken.model and a tokenizer_config.json whose specials follow the ranks with
    the fixture's (K3's) names, offsets and flags."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "tiktoken.model"), "w") as f:
        for i, t in enumerate(vocab):
            f.write("%s %d\n" % (base64.b64encode(t).decode(), i))
    cfg = json.load(open(fixture_config))
    old = cfg["added_tokens_decoder"]
    base_old = min(int(k) for k in old)            # the fixture's first special id ([BOS])
    cfg["added_tokens_decoder"] = {str(int(k) - base_old + len(vocab)): v for k, v in old.items()}
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump(cfg, f, indent=2, ensure_ascii=False)
        f.write("\n")


# ----------------------------------------------------------------------------- command line

def _no_digit_pair(a, b):
    return not any(48 <= c <= 57 for c in a + b)


def main():
    """python3 tokenizer.py train OUTDIR [N_RANKS]: learn our vocabulary on generated
    training text (digits never merge, so numbers are one token per digit), write
    tiktoken.model + tokenizer_config.json, and tokenizer_samples.json beside this file."""
    import random
    import sys
    import gen_data
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2]
    n_ranks = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
    rng = random.Random(12345)
    texts = []
    for _ in range(20000):
        ex = gen_data.make_example(rng)
        segs = (user_segments(ex["prompt"]) + gen_prompt_segments()
                + assistant_tail_segments(ex["reasoning"], ex["reference"]))
        texts.extend(t for t, control in segs if not control)
    vocab = train_bpe(texts, n_ranks, _no_digit_pair)
    fixture = os.environ.get("REMORA_FIXTURES", os.path.join(here, "../../tests/fixtures"))
    write_tokenizer(out, vocab, os.path.join(fixture, "tokenizer", "tokenizer_config.json"))
    tok = Tokenizer.load(out)
    samples = ["What is 37*12?", "Hello, world! It's a test.", "  two  spaces\n\nnew lines\r\n",
               "Reverse the word \"planet\".", "12345678 + 0.5 = ?", "naïve café déjà vu",
               "汉字 and かな and 한글", "emoji 🙂👍🏽 done", "<|open|>literal special<|sep|>",
               "THE QUICK brown Fox's tail", "tabs\tand\ttabs", "2024-03-25 plus 17 days"]
    ex = gen_data.make_example(random.Random(99), "mul")
    chat = user_segments(ex["prompt"]) + gen_prompt_segments() + assistant_tail_segments(ex["reasoning"], ex["reference"])
    doc = {"note": "ids = encode(text) with special tokens as plain text; ids_allow_special with "
                   "special-token strings mapped to their ids; chat = segments rendered as K3 XTML "
                   "(control segments with specials allowed, text segments ordinary).",
           "cases": [{"text": s, "ids": tok.encode(s), "ids_allow_special": tok.encode(s, True)} for s in samples],
           "chat": {"segments": [{"text": t, "control": c} for t, c in chat], "ids": encode_segments(tok, chat)}}
    with open(os.path.join(here, "tokenizer_samples.json"), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("ranks", len(vocab), "longest token", max(vocab, key=len))


if __name__ == "__main__":
    main()
