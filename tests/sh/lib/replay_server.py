"""replay_server.py — an OpenAI-compatible server that replays what real
servers send, for the endpoint tests (tests/sh/endpoint_replay.sh).

The chunk sequences are those of vLLM and SGLang serving a reasoning model
(the shapes of vllm/entrypoints/openai/chat_completion/protocol.py and
sglang/srt/entrypoints/openai/serving_chat.py): vLLM's reasoning in
delta.reasoning with None fields left out, finish_reason on the last text
chunk, usage with completion_tokens_details.reasoning_tokens; SGLang's
reasoning_content with every None field sent as null, finish_reason in a
chunk of its own, reasoning_tokens at the top of usage. The first path
segment picks a scenario: /vllm/v1/... (also /v1/...), /sglang/v1/..., /markers/...,
/markers-k3/..., /error-mid/..., /busy/..., /stall/..., /redirect/...,
/slow/..., /whole/..., /badjson/..., /routes/..., /b64-*/... (SGLang's
base64 routed experts, below; their /models lists "served-moe", an id that
names no model, so the client must tell the shape from the length and the
token count). A chat's last user
message "@SCENARIO" picks that scenario for one turn instead, so a screen
test can meet an error and go on in the same chat.

Every request is logged as one JSON line (server, method, path, whether an
Authorization header came and its value, the body) to LOG, so the tests can
check what the client sent and where. A second server on 127.0.0.2 (another
host, still loopback) is where /redirect/ points.

usage: python3 replay_server.py PORTFILE LOG [CERT KEY]
PORTFILE gets "PORT PORT2" once both listen; with CERT and KEY (PEM) a
third server on 127.0.0.1 speaks TLS with that certificate and PORTFILE
gets "PORT PORT2 PORT3" (a self-signed one: the client must refuse it
before it sends anything). Python's standard library only; loopback only;
every wait is bounded.
"""
import base64
import json
import os
import struct
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOG = sys.argv[1], sys.argv[2]
CERT = sys.argv[3:5] if len(sys.argv) >= 5 else None
lock = threading.Lock()
ports = {}

REASONING = ["The user asks", " for 12 plus 30.", " Add the units:", " 2 + 0 = 2;", " tens: 1 + 3 = 4."]
ANSWER = ["12 + 30", " = **42**", "."]
MODEL = "moonshotai/Kimi-K3"


def log(entry):
    with lock:
        with open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")


def vllm_chunks():
    base = {"id": "chatcmpl-b1f6", "object": "chat.completion.chunk", "created": 1767225600, "model": MODEL}
    out = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                                "finish_reason": None}])]
    for r in REASONING:
        out.append(dict(base, choices=[{"index": 0, "delta": {"reasoning": r}, "logprobs": None,
                                        "finish_reason": None}]))
    for i, a in enumerate(ANSWER):
        last = i == len(ANSWER) - 1
        c = {"index": 0, "delta": {"content": a}, "logprobs": None, "finish_reason": "stop" if last else None}
        if last:
            c["stop_reason"] = None
        out.append(dict(base, choices=[c]))
    out.append(dict(base, choices=[], usage={"prompt_tokens": 31, "total_tokens": 51, "completion_tokens": 20,
                                             "prompt_tokens_details": {"cached_tokens": 16},
                                             "completion_tokens_details": {"reasoning_tokens": 14}}))
    return out


def sglang_chunks():
    base = {"id": "8f2a0c", "object": "chat.completion.chunk", "created": 1767225600, "model": MODEL}
    empty = {"role": None, "content": None, "reasoning_content": None, "tool_calls": None}

    def chunk(delta, finish=None, matched=None):
        return dict(base, choices=[{"index": 0, "delta": dict(empty, **delta), "logprobs": None,
                                    "finish_reason": finish, "matched_stop": matched}], usage=None)
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": r}) for r in REASONING]
    out += [chunk({"content": a}) for a in ANSWER]
    out.append(chunk({}, "stop", 163586))
    out.append(dict(base, choices=[], usage={"prompt_tokens": 31, "total_tokens": 51, "completion_tokens": 20,
                                             "prompt_tokens_details": None, "reasoning_tokens": 14}))
    return out


# SGLang's routed experts for return_routed_experts: int32 [tokens][layers][k]
# over every layer of the model (the dense layer 0 left zero), base64, in
# sglext of the last chunk; the usage says 31 + 20 tokens, the routes cover
# 50 (the last token is not run). Kimi-Linear: 27 layers x 8 of 256; Kimi
# K3: 93 x 16 of 896. Token t's id at layer l, slot i: (t + 3 l + 5 i) mod E.
def routes_bytes(layers, k, experts, tokens=50, bad_id=None):
    vals = []
    for t in range(tokens):
        for l in range(layers):
            for i in range(k):
                vals.append(0 if l == 0 else (t + 3 * l + 5 * i) % experts)
    if bad_id is not None:
        vals[-1] = bad_id
    return struct.pack("<%di" % len(vals), *vals)


B64_ROUTES = {
    "b64-kl": lambda: base64.b64encode(routes_bytes(27, 8, 256)).decode(),
    "b64-k3": lambda: base64.b64encode(routes_bytes(93, 16, 896)).decode(),
    # 13,392 values: 9 tokens of K3 or 62 of Kimi-Linear, and the usage's 51 is neither
    "b64-ambiguous": lambda: base64.b64encode(struct.pack("<13392i", *([1] * 13392))).decode(),
    "b64-noshape": lambda: base64.b64encode(struct.pack("<1000i", *([1] * 1000))).decode(),
    "b64-truncated": lambda: base64.b64encode(routes_bytes(27, 8, 256)).decode()[:-3],
    "b64-badchar": lambda: "!" + base64.b64encode(routes_bytes(27, 8, 256)).decode()[1:],
    "b64-odd": lambda: base64.b64encode(b"0123456789").decode(),
    "b64-range": lambda: base64.b64encode(routes_bytes(27, 8, 256, bad_id=300)).decode(),
}


def b64_chunks(scen):
    out = sglang_chunks()
    out[-1]["sglext"] = {"routed_experts": B64_ROUTES[scen]()}
    return out


def content_chunks(pieces):
    base = {"id": "chatcmpl-m", "object": "chat.completion.chunk", "created": 1767225600, "model": MODEL}
    out = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    for i, p in enumerate(pieces):
        out.append(dict(base, choices=[{"index": 0, "delta": {"content": p},
                                        "finish_reason": "stop" if i == len(pieces) - 1 else None}]))
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, status, obj, extra=()):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, obj, nl="\n"):
        data = obj if isinstance(obj, str) else json.dumps(obj)
        self.wfile.write(("data: " + data + nl + nl).encode())
        self.wfile.flush()

    def record(self, body):
        log({"server": self.server.name, "method": self.command, "path": self.path,
             "auth": self.headers.get("Authorization"), "body": body})

    def do_GET(self):
        self.record(None)
        scen = self.path.strip("/").split("/")[0]
        if scen == "redirect" and self.server.name == "main":
            return self.redirect()
        if scen == "v1":
            scen = "vllm"
        if self.path.endswith("/models"):
            return self.send_json(200, {"object": "list", "data": [
                {"id": "served-moe" if scen.startswith("b64") else MODEL, "object": "model", "created": 0,
                 "owned_by": scen}]})
        self.send_json(404, {"error": {"message": "no such route", "type": "not_found"}})

    def redirect(self):
        target = "http://127.0.0.2:%d%s" % (ports["other"], self.path.replace("/redirect/", "/vllm/", 1))
        n = int(self.headers.get("Content-Length") or 0)
        if n and self.command == "POST":
            pass
        self.send_response(307)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        self.record(body)
        scen = self.path.strip("/").split("/")[0]
        if scen == "redirect" and self.server.name == "main":
            return self.redirect()
        try:
            last = body["messages"][-1]["content"]
        except (TypeError, KeyError, IndexError):
            last = ""
        if isinstance(last, str) and last.startswith("@"):
            scen = last[1:].split()[0]
        if scen == "busy":
            return self.send_json(429, {"error": {"message": "Too many requests: 8 running, 32 waiting",
                                                  "type": "rate_limit_error", "code": 429}},
                                  [("Retry-After", "7")])
        if scen == "badjson":
            return self.send_json(400, {"object": "error", "message": "messages[1].content: field required",
                                        "type": "BadRequestError", "param": None, "code": 400})
        if scen == "whole":
            return self.send_json(200, {"id": "x", "object": "chat.completion", "created": 0, "model": MODEL,
                                        "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                            "role": "assistant", "content": "".join(ANSWER),
                                            "reasoning_content": "".join(REASONING)}}],
                                        "usage": {"prompt_tokens": 31, "completion_tokens": 20, "total_tokens": 51}})
        self.start_stream()
        if scen in ("vllm", "redirect", "v1"):
            for c in vllm_chunks():
                self.event(c)
            self.event("[DONE]")
        elif scen == "sglang":
            for c in sglang_chunks():
                self.event(c)
            self.event("[DONE]")
        elif scen in B64_ROUTES:
            for c in b64_chunks(scen):
                self.event(c)
            self.event("[DONE]")
        elif scen == "routes":
            # vLLM's chunks with each text chunk's routed experts, nested
            # [tokens][layers][k] as ui/sse.c reads them: 4 layers, top-2 of
            # 16 experts (the last always among them), one token per chunk
            for n, c in enumerate(vllm_chunks()):
                for ch in c["choices"]:
                    d = ch["delta"]
                    if d.get("reasoning") or d.get("content"):
                        ch["routed_experts"] = [[[(n + l) % 15, 15] for l in range(4)]]
                self.event(c)
            self.event("[DONE]")
        elif scen == "markers":
            for c in content_chunks(["<thi", "nk>Let me", " add: 42.</th", "ink>The answer", " is 42."]):
                self.event(c)
            self.event("[DONE]")
        elif scen == "markers-k3":
            for c in content_chunks(["Twelve plus", " thirty.<|clo", "se|>think<|sep|><|open|>resp",
                                     "onse<|sep|>It is 42.", "<|close|>response<|sep|>"]):
                self.event(c)
            self.event("[DONE]")
        elif scen == "error-mid":
            for c in content_chunks(["The answer", " is"])[:-1]:
                self.event(c)
            self.event({"error": {"message": "CUDA out of memory while decoding", "type": "InternalServerError",
                                  "param": None, "code": 500}})
            self.event("[DONE]")
        elif scen in ("stall", "slow"):
            pieces = ["Counting:"] + [" %d" % i for i in range(1, 201)]
            for i, c in enumerate(content_chunks(pieces)):
                try:
                    self.event(c)
                except OSError:
                    return
                if scen == "stall" and i == 2:
                    for _ in range(100):    # 10 s at most; the client gives up long before
                        time.sleep(0.1)
                        try:
                            self.wfile.write(b"")
                        except OSError:
                            return
                    return
                if scen == "slow":
                    time.sleep(0.05)
            self.event("[DONE]")


class Server(ThreadingHTTPServer):
    daemon_threads = True


def serve(name, host, tls=None):
    s = Server((host, 0), Handler)
    s.name = name
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*tls)
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
    ports[name] = s.server_address[1]
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s


serve("main", "127.0.0.1")
serve("other", "127.0.0.2")
names = ["main", "other"]
if CERT:
    serve("tls", "127.0.0.1", CERT)
    names.append("tls")
with open(PORTFILE + ".tmp", "w") as f:
    f.write(" ".join(str(ports[n]) for n in names) + "\n")
os.rename(PORTFILE + ".tmp", PORTFILE)
for _ in range(6000):          # 10 minutes at most
    time.sleep(0.1)
