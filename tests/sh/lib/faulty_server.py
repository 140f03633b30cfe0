#!/usr/bin/env python3
"""faulty_server.py — a small HTTP/1.1 file server on 127.0.0.1 that
misbehaves on request, for the stream-mode fault tests.

It serves the files under --root with single byte ranges (206 and
Content-Range) and keep-alive, writes its port to --port-file, appends one
line per request to --log ("PATH RANGE STATUS"), and exits by itself after
--lifetime seconds (so a failed test never leaves it running).

GET /__fault?mode=M&count=N arms a fault for the next N range requests:
  drop      send the headers and half the body, then close the connection
  500, 503  answer that status
  429       answer 429 with Retry-After: 1
  badrange  206 with a Content-Range that starts one byte late
  truncate  206 with Content-Length (and body) of half the range
  slow      trickle the body at 32 bytes/s
  full200   ignore Range: 200 with the whole file
  delay     wait 0.1 s, then answer correctly (to make a fetch slow)
  trickle   send the body at about 1.5 KB/s (just above the old 1 KB/s floor)
  hang      send the headers, then nothing for 60 s
  onebad    the first request answers a bad Content-Range, the others hang
  etag      answer with another ETag (the file changed upstream)
&skip=K lets the first K range requests through before the fault starts.

Every file has an ETag (its mtime and size, as nginx makes them); a range
request whose If-Match names another ETag gets 412, one whose If-Range does
gets 200 with the whole file, as RFC 9110 says.
"""
import argparse
import os
import re
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULT = {"mode": None, "count": 0, "skip": 0, "seen": 0}
LOCK = threading.Lock()


def take_fault():
    with LOCK:
        if FAULT["skip"] > 0:
            FAULT["skip"] -= 1
            return None
        if FAULT["count"] > 0:
            FAULT["count"] -= 1
            FAULT["seen"] += 1
            if FAULT["mode"] == "onebad":
                return "badrange" if FAULT["seen"] == 1 else "hang"
            return FAULT["mode"]
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # headers and body are two writes: without this, Nagle and delayed
        # ACKs add 40 ms to every answer
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        pass

    def note(self, rng, status):
        with LOCK, open(ARGS.log, "a") as f:
            f.write("%s %s %s\n" % (self.path, rng or "-", status))

    def plain(self, status, body=b"", extra=()):
        self.send_response(status)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def trickle(self, body, piece, pause, limit):
        """Sends body `piece` bytes every `pause` seconds, for at most `limit` seconds."""
        end = time.time() + limit
        for i in range(0, len(body), piece):
            if time.time() > end:
                break
            self.wfile.write(body[i:i + piece])
            self.wfile.flush()
            time.sleep(pause)

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/__fault":
            q = urllib.parse.parse_qs(url.query)
            with LOCK:
                FAULT["mode"] = q["mode"][0]
                FAULT["count"] = int(q.get("count", ["1"])[0])
                FAULT["skip"] = int(q.get("skip", ["0"])[0])
                FAULT["seen"] = 0
            return self.plain(200, b"ok\n")
        path = os.path.realpath(os.path.join(ARGS.root, url.path.lstrip("/")))
        if not path.startswith(os.path.realpath(ARGS.root) + os.sep) or not os.path.isfile(path):
            self.note(None, 404)
            return self.plain(404, b"not found\n")
        size = os.path.getsize(path)
        st = os.stat(path)
        etag = '"%x-%x"' % (int(st.st_mtime), st.st_size)
        rng = self.headers.get("Range")
        mode = take_fault() if rng else None
        if mode == "etag":
            etag = '"%x-%x-other"' % (int(st.st_mtime), st.st_size)
        im, ir = self.headers.get("If-Match"), self.headers.get("If-Range")
        if rng and im and im.strip() != etag:
            self.note(rng, 412)
            return self.plain(412, b"precondition failed\n", [("ETag", etag)])
        if rng and ir and ir.strip() != etag:
            rng = None
        if not rng:
            self.note(None, 200)
            with open(path, "rb") as f:
                return self.plain(200, f.read(), [("ETag", etag)])
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", rng.strip())
        a, b = int(m.group(1)), min(int(m.group(2)), size - 1)
        with open(path, "rb") as f:
            f.seek(a)
            body = f.read(b - a + 1)
        self.note(rng, mode or 206)
        if mode in ("500", "503"):
            return self.plain(int(mode), b"server trouble\n")
        if mode == "429":
            return self.plain(429, b"slow down\n", [("Retry-After", "1")])
        if mode == "full200":   # a server that ignores Range still names the revision it sends
            with open(path, "rb") as f:
                return self.plain(200, f.read(), [("ETag", etag)])
        if mode == "delay":
            time.sleep(0.1)
        self.send_response(206)
        self.send_header("ETag", etag)
        start = a + 1 if mode == "badrange" else a
        self.send_header("Content-Range", "bytes %d-%d/%d" % (start, b, size))
        half = len(body) // 2
        self.send_header("Content-Length", str(half if mode == "truncate" else len(body)))
        self.end_headers()
        if mode in ("drop", "truncate"):
            self.wfile.write(body[:half])
            self.wfile.flush()
            if mode == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if mode == "trickle":
            return self.trickle(body, 150, 0.1, 60)
        if mode == "hang":
            self.wfile.flush()
            time.sleep(60)
            return
        if mode == "slow":
            return self.trickle(body, 16, 0.5, 30)
        self.wfile.write(body)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--lifetime", type=float, default=300)
    ARGS = p.parse_args()
    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass    # clients that give up on a fault reset their connection: expected

    srv = Server(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Timer(ARGS.lifetime, lambda: os._exit(3)).start()
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
