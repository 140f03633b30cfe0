#!/usr/bin/env python3
"""hostile_server.py ROOT PORTFILE LIFETIME — a misbehaving HTTP server on
127.0.0.1 for the setup and --endpoint tests; it writes its port to PORTFILE
and exits by itself after LIFETIME seconds. The first path component picks
the fault:

  /bigconfig/...   the files under ROOT, but config.json is 17 MB of JSON
  /nototal/...     the files under ROOT; ranges answer "Content-Range:
                   bytes A-B/*" (no total)
  /noetag/...      the files under ROOT with Last-Modified and no ETag
  /oa-MODE/v1/...  an OpenAI-compatible endpoint (GET models, POST chat
                   completions) whose stream misbehaves as MODE says:
       endless     content chunks for ever, one every 10 ms
       long        3000 content chunks, then [DONE]
       bigline     one SSE line of 80 MB that never ends
       escape      content, reasoning and model id with terminal escapes
                   (ESC, CSI, OSC, C1 U+009B, DEL, bare CR)
       errescape   a 400 whose error message holds escapes
       retry       a 429 whose Retry-After holds escapes
       moderr      GET models answers a 500 whose message holds escapes
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT, PORTFILE, LIFETIME = sys.argv[1], sys.argv[2], float(sys.argv[3])
ESC = '\x1b[31mRED\x1b[0m\x1b]0;pwned\x07\x1b[6n\u009b31m\x7f\rOVER'


class H(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *a):
        pass

    def send(self, status, body, ctype='application/json', extra=()):
        self.send_response(status)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        parts = self.path.split('/', 2)
        mode, rest = parts[1], parts[2] if len(parts) > 2 else ''
        if mode == 'oa-moderr':
            e = {'error': {'message': 'no models ' + ESC, 'type': 'server_error', 'param': None, 'code': None}}
            return self.send(500, json.dumps(e).encode())
        if mode.startswith('oa-'):
            models = {'object': 'list', 'data': [{'id': 'm' + (ESC if mode == 'oa-escape' else ''), 'object': 'model'}]}
            return self.send(200, json.dumps(models).encode())
        path = os.path.join(ROOT, rest)
        if mode == 'bigconfig' and rest == 'config.json':
            body = b'{"pad": "' + b'x' * (17 << 20) + b'"}'
            return self.send(200, body)
        if not os.path.isfile(path):
            return self.send(404, b'not found', 'text/plain')
        data = open(path, 'rb').read()
        st = os.stat(path)
        tags = [('Last-Modified', self.date_time_string(int(st.st_mtime)))]
        if mode != 'noetag':
            tags.append(('ETag', '"%x-%x"' % (int(st.st_mtime), st.st_size)))
        rng = self.headers.get('Range')
        if rng and rng.startswith('bytes='):
            a, _, b = rng[6:].partition('-')
            a = int(a)
            b = min(int(b) if b else len(data) - 1, len(data) - 1)
            total = '*' if mode == 'nototal' else str(len(data))
            body = data[a:b + 1]
            return self.send(206, body, 'application/octet-stream',
                             tags + [('Content-Range', 'bytes %d-%d/%s' % (a, b, total))])
        return self.send(200, data, 'application/octet-stream', tags)

    def chunk(self, text, reasoning=None, model='m'):
        d = {'content': text}
        if reasoning is not None:
            d = {'reasoning_content': reasoning}
        c = {'id': 'x', 'object': 'chat.completion.chunk', 'model': model,
             'choices': [{'index': 0, 'delta': d, 'finish_reason': None}]}
        return ('data: ' + json.dumps(c) + '\n\n').encode()

    def do_POST(self):
        n = int(self.headers.get('Content-Length', '0'))
        self.rfile.read(n)
        mode = self.path.split('/', 2)[1][3:]
        if mode == 'errescape':
            e = {'error': {'message': 'bad ' + ESC, 'type': 'invalid_request_error', 'param': None, 'code': None}}
            return self.send(400, json.dumps(e).encode())
        if mode == 'retry':
            e = {'error': {'message': 'slow down', 'type': 'rate_limit', 'param': None, 'code': None}}
            return self.send(429, json.dumps(e).encode(), extra=[('Retry-After', '1\x1b[2J')])
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Connection', 'close')
        self.end_headers()
        try:
            if mode == 'endless':
                while True:
                    self.wfile.write(self.chunk('la '))
                    self.wfile.flush()
                    time.sleep(0.01)
            elif mode == 'long':
                for i in range(3000):
                    self.wfile.write(self.chunk('w%d ' % i))
                self.wfile.write(b'data: [DONE]\n\n')
            elif mode == 'bigline':
                self.wfile.write(b'data: {"x": "')
                for i in range(80):
                    self.wfile.write(b'y' * (1 << 20))
                time.sleep(30)
            elif mode == 'escape':
                self.wfile.write(self.chunk(None, reasoning='think ' + ESC, model='m' + ESC))
                self.wfile.write(self.chunk('answer ' + ESC + ' end'))
                self.wfile.write(b'data: [DONE]\n\n')
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


srv = ThreadingHTTPServer(('127.0.0.1', 0), H)
srv.daemon_threads = True
srv.handle_error = lambda *a: None      # a client that resets is not news
with open(PORTFILE + '.tmp', 'w') as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + '.tmp', PORTFILE)
threading.Timer(LIFETIME, lambda: os._exit(0)).start()
srv.serve_forever()
