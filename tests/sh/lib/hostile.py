#!/usr/bin/env python3
"""hostile.py PORT — raw-socket clients against `remora serve` on
127.0.0.1:PORT (started with --idle-timeout 2 by serve_hostile.sh): request
smuggling, heads too large, what libmicrohttpd answers itself, bad bytes in
what error messages quote, %00 in the path, tools of
the wrong type, log forging, slowloris and the per-address limit. Prints one
"ok" or "FAIL" line per case; every socket has a time-out, so nothing waits
for ever."""
import json
import socket
import sys
import time

PORT = int(sys.argv[1])
FAILS = 0


def say(ok, what, detail=''):
    global FAILS
    if ok:
        print('ok   ' + what)
    else:
        FAILS += 1
        print('FAIL ' + what + ': ' + detail)


def exchange(raw, timeout=8.0, half_close=False):
    """Sends raw bytes, reads until the server closes or `timeout`; returns
    (bytes, seconds)."""
    s = socket.create_connection(('127.0.0.1', PORT), timeout=timeout)
    t = time.time()
    s.sendall(raw)
    if half_close:
        s.shutdown(socket.SHUT_WR)
    got = b''
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except socket.timeout:
        pass
    s.close()
    return got, time.time() - t


def responses(data):
    """The status lines in data and the JSON bodies (Content-Length framed)."""
    out = []
    while data.startswith(b'HTTP/1.'):
        head, _, rest = data.partition(b'\r\n\r\n')
        lines = head.split(b'\r\n')
        status = int(lines[0].split()[1])
        hdrs = {}
        for l in lines[1:]:
            k, _, v = l.partition(b':')
            hdrs[k.strip().lower()] = v.strip()
        n = int(hdrs.get(b'content-length', b'0'))
        out.append((status, hdrs, rest[:n]))
        data = rest[n:]
    return out, data


def error_ok(body):
    try:
        e = json.loads(body.decode('utf-8'))['error']
        return sorted(e) == ['code', 'message', 'param', 'type'] and e['message']
    except Exception:
        return False


def request(method, path, body=b'', headers=None, host=b'localhost'):
    h = [b'%s %s HTTP/1.1' % (method, path), b'Host: ' + host, b'Connection: close']
    h += headers if headers is not None else [b'Content-Length: %d' % len(body)]
    return b'\r\n'.join(h) + b'\r\n\r\n' + body


def expect(what, raw, status, count=1, half_close=False, within=None):
    data, secs = exchange(raw, half_close=half_close)
    rs, rest = responses(data)
    ok = len(rs) == count and rs[0][0] == status and error_ok(rs[0][2]) and not rest
    if ok and within is not None:
        ok = secs < within
    say(ok, '%s: %d%s' % (what, status, ' in %.2f s' % secs if within else ''),
        'got %s, %.2f s: %r' % ([r[0] for r in rs], secs, data[:300]))
    return rs


MSG = b'{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}'
inner = b'GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n'

# ---- request smuggling (RFC 9112 section 6) ------------------------------
expect('two Content-Length headers that differ',
       request(b'POST', b'/v1/chat/completions', MSG + inner,
               [b'Content-Length: %d' % len(MSG), b'Content-Length: %d' % (len(MSG) + len(inner))]), 400)
# libmicrohttpd 0.9.75 refuses these itself, before the handler runs, with a
# reply whose status line and headers come twice: the server closes the
# connection instead, before a byte of that reply is sent
for what, cl in (('not a number', b'12abc'), ('over 2^64', b'99999999999999999999999')):
    data, secs = exchange(request(b'POST', b'/v1/chat/completions', MSG + inner, [b'Content-Length: ' + cl]))
    say(data == b'' and secs < 2, 'a Content-Length %s: closed without a reply in %.2f s' % (what, secs),
        repr(data[:300]))
expect('Content-Length beside Transfer-Encoding: chunked',
       request(b'POST', b'/v1/chat/completions', b'5\r\nhello\r\n0\r\n\r\n',
               [b'Content-Length: 5', b'Transfer-Encoding: chunked']), 400)
expect('an unknown Transfer-Encoding, at once',
       request(b'POST', b'/v1/chat/completions', b'xx', [b'Transfer-Encoding: gzip']), 501, within=1.5)
expect('a non-final chunked (chunked, gzip), at once',
       request(b'POST', b'/v1/chat/completions', b'xx', [b'Transfer-Encoding: chunked, gzip']), 501, within=1.5)
expect('two Transfer-Encoding headers, at once',
       request(b'POST', b'/v1/chat/completions', b'0\r\n\r\n',
               [b'Transfer-Encoding: chunked', b'Transfer-Encoding: chunked']), 501, within=1.5)
expect('two equal Content-Length headers are one length',
       request(b'GET', b'/v1/models/nope', b'', [b'Content-Length: 0', b'Content-Length: 0']), 404)

# ---- bad bytes quoted in error messages ------------------------------------
def chat(body):
    return request(b'POST', b'/v1/chat/completions', body)

expect('a long multibyte role', chat(json.dumps(
    {"messages": [{"role": "\u00e9" * 700, "content": "x"}]}).encode()), 400)
expect('a long multibyte model name', chat(json.dumps(
    {"model": "\u4e2d" * 700, "messages": [{"role": "user", "content": "x"}]}).encode()), 404)
expect('%ff in the path', request(b'GET', b'/v1/%ff%fe' + b'%e4%b8' * 40), 404)
expect('a bad byte in Host', request(b'GET', b'/v1/models', host=b'\xff\xfelocalhost'), 403)
expect('a bad byte in Origin', request(b'GET', b'/v1/models', b'',
                                       [b'Content-Length: 0', b'Origin: http://ev\xffil.example']), 403)
expect('%00 in the path', request(b'GET', b'/v1/models%00'), 404)
expect('%00 inside a model id', request(b'GET', b'/v1/models/k3-tiny%00x'), 404)
for what, tools in (('a string', ["x"]), ('a number', [5]), ('no function', [{"type": "function"}]),
                    ('another type', [{"type": "retrieval", "function": {"name": "f"}}])):
    rs = expect('a tools entry of the wrong type (%s)' % what, chat(json.dumps(
        {"messages": [{"role": "user", "content": "x"}], "tools": tools}).encode()), 400)
    if rs and rs[0][0] == 400:
        p = json.loads(rs[0][2])['error']['param']
        say(p == 'tools[0]', 'the param is tools[0]', repr(p))

# ---- heads too large: ours are JSON, the library's limits lie far above ---
def get_models(extra):
    return b'GET /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n' + extra + b'\r\n'

expect('a request target over 8 KiB', request(b'GET', b'/v1/models?q=' + b'a' * 9000), 414)
expect('a header over the 32 KiB head', get_models(b'X-Big: ' + b'a' * 40000 + b'\r\n'), 431)
data, _ = exchange(request(b'POST', b'/v1/messages?q=' + b'a' * 9000, b'{}'))
rs, rest = responses(data)
try:
    an = json.loads(rs[0][2])
    an_ok = an['type'] == 'error' and an['error']['type'] and an['error']['message']
except Exception:
    an_ok = False
say(len(rs) == 1 and rs[0][0] == 414 and an_ok, 'a long target on /v1/messages: 414 in the Anthropic envelope',
    repr(data[:300]))
data, _ = exchange(get_models(b'a:\r\n' * 8000))
rs, rest = responses(data)
say(len(rs) == 1 and rs[0][0] == 200 and b'"object"' in rs[0][2] and not rest,
    '8,000 header lines within the 32 KiB head reach the handler: 200', repr(data[:200]))
expect('9,000 header lines (36 KB)', get_models(b'a:\r\n' * 9000), 431)
expect('a header of 600 KB', get_models(b'X-Big: ' + b'a' * 600000 + b'\r\n'), 431)
# what stays in libmicrohttpd's hands, no client library sends it: its short
# HTML page with the status, one status line, and the connection closed
for what, raw, status in (
        ('a request line without a valid version', b'GET /v1/models HTXP/1.1\r\nHost: localhost\r\n\r\n', 400),
        ('HTTP/2.0 in a request line', b'GET /v1/models HTTP/2.0\r\nHost: localhost\r\n\r\n', 505),
        ('HTTP/2\'s preface', b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 505),
        ('a header line without a colon', get_models(b'garbage\r\n'), 400),
        ('a malformed chunk size', request(b'POST', b'/v1/chat/completions', b'zz\r\nhello\r\n0\r\n\r\n',
                                           [b'Transfer-Encoding: chunked']), 400),
        ('a header of 700 KB', get_models(b'X-Big: ' + b'a' * 700000 + b'\r\n'), 431),
        ('10,000 header lines', get_models(b'a:\r\n' * 10000), 431)):
    data, _ = exchange(raw)
    rs, rest = responses(data)
    say(len(rs) == 1 and rs[0][0] == status and rs[0][1].get(b'connection') == b'close' and not rest
        and data.count(b'HTTP/1.') == 1, '%s: libmicrohttpd\'s own %d, one status line' % (what, status),
        repr(data[:300]))

# ---- a half-close after a complete request wants its reply ---------------
data, _ = exchange(chat(MSG), half_close=True, timeout=30)
rs, rest = responses(data)
st = [r[0] for r in rs]
say(st and st[-1] == 200 and set(st[:-1]) <= {100} and b'chat.completion' in rs[-1][2],
    'a half-close after a whole request: the reply comes (%s)' % st, repr(data[:300]))
data, _ = exchange(chat(MSG[:-1] + b',"stream":true}'), half_close=True, timeout=30)
say(data.startswith(b'HTTP/1.1 200') and b'data: [DONE]' in data, 'a half-close after a stream request: the stream comes',
    repr(data[:300]))
data, _ = exchange(chat(MSG).replace(b'HTTP/1.1', b'HTTP/1.0', 1), half_close=True, timeout=30)
say(data.startswith(b'HTTP/1.0 200') or data.startswith(b'HTTP/1.1 200'),
    'a half-close of HTTP/1.0: the reply comes, no interim 100', repr(data[:120]))

# ---- log forging ----------------------------------------------------------
expect('a path with %0a and %1b', request(b'GET', b'/v1/x%0aFORGED%20line%0a%1b[31m'), 404)
expect('a raw escape in the method', b'G\x1bT /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n', 405)

# ---- slowloris ------------------------------------------------------------
def trickle(head, body_bytes, what):
    """Sends head a byte every 0.25 s (then the body so) and returns the
    seconds until the server closed."""
    s = socket.create_connection(('127.0.0.1', PORT), timeout=10)
    t = time.time()
    sent = b''
    try:
        s.sendall(head[:0])
        data = head + body_bytes
        for i in range(len(data)):
            s.sendall(data[i:i + 1])
            sent += data[i:i + 1]
            time.sleep(0.25)
            if time.time() - t > 8:
                break
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        while s.recv(4096):
            pass
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return time.time() - t

secs = trickle(b'GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-Slow: ' + b'a' * 60, b'', 'headers')
say(1.8 < secs < 3.5, 'headers trickled a byte at a time are cut at the deadline (%.1f s, --idle-timeout 2)' % secs,
    '%.1f s' % secs)
head = b'POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: 500\r\n\r\n'
s = socket.create_connection(('127.0.0.1', PORT), timeout=10)
s.sendall(head)
t = time.time()
try:
    for i in range(60):
        s.sendall(b' ')
        time.sleep(0.25)
except (BrokenPipeError, ConnectionResetError):
    pass
secs = time.time() - t
s.close()
say(1.8 < secs < 4, 'a body trickled a byte at a time is cut at the deadline (%.1f s)' % secs, '%.1f s' % secs)

# ---- one address holds at most 16 connections, on loopback too ------------
socks = [socket.create_connection(('127.0.0.1', PORT), timeout=5) for _ in range(16)]
extra = socket.create_connection(('127.0.0.1', PORT), timeout=5)
extra.sendall(request(b'GET', b'/health'))
try:
    refused = extra.recv(100) == b''
except (ConnectionResetError, socket.timeout):
    refused = True
say(refused, 'a 17th connection from one address is refused on loopback')
for x in socks + [extra]:
    x.close()
time.sleep(0.5)
data = b''
for i in range(40):
    data, _ = exchange(request(b'GET', b'/health'))
    if data.startswith(b'HTTP/1.1 200'):
        break
    time.sleep(0.1)
say(data.startswith(b'HTTP/1.1 200'), 'served again once they closed', repr(data[:80]))
sys.exit(1 if FAILS else 0)
