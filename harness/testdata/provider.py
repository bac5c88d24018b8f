#!/usr/bin/env python3
"""A YEP capability server that is a model provider, standard library only:
on initialize it starts an OpenAI-compatible endpoint on 127.0.0.1 (a free
port) in a thread and announces it in capability_params.provider.

The endpoint serves GET /v1/models and a streamed POST
/v1/chat/completions that answers "pong <n>" (n counts the completions of
this process, from 1). A last user message containing "crash" gets the
first chunks of a reply, then the whole process exits at once with status
3: a server dying mid-stream.

The environment shapes the announcement, so tests can make it wider than
the approval:
  PROVIDER_MODELS   comma-separated model ids (default "m1")
  PROVIDER_HOST     the host written in baseUrl (default 127.0.0.1)
  PROVIDER_NONE     set: announce no provider at all
"""

import http.server
import json
import os
import sys
import threading

write_lock = threading.Lock()
served = 0
served_lock = threading.Lock()


def send(msg):
    with write_lock:
        sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
        sys.stdout.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        print("provider.py:", fmt % args, file=sys.stderr, flush=True)

    def reply_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path != "/v1/models":
            self.reply_json(404, {"error": {"message": "no such path"}})
            return
        models = [{"id": m, "object": "model", "owned_by": "test"} for m in MODELS]
        self.reply_json(200, {"object": "list", "data": models})

    def chunk(self, model, delta, finish=None):
        c = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
        self.wfile.flush()

    def do_POST(self):
        global served
        if self.path != "/v1/chat/completions":
            self.reply_json(404, {"error": {"message": "no such path"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        model = body.get("model", "")
        last = (body.get("messages") or [{}])[-1]
        text = last.get("content") if isinstance(last.get("content"), str) else ""
        with served_lock:
            served += 1
            n = served
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.chunk(model, {"role": "assistant", "content": ""})
        if last.get("role") == "user" and "crash" in text:
            self.chunk(model, {"content": "about to "})
            os._exit(3)
        self.chunk(model, {"content": "pong %d" % n})
        self.chunk(model, {}, "stop")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


MODELS = [m for m in os.environ.get("PROVIDER_MODELS", "m1").split(",") if m]


def initialize(msg_id):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    result = {"protocol_version": "1.0", "name": "prov", "version": "0.1.0", "capabilities": ["cancel"]}
    if not os.environ.get("PROVIDER_NONE"):
        host = os.environ.get("PROVIDER_HOST", "127.0.0.1")
        result["capabilities"].append("provider")
        result["capability_params"] = {"provider": {"baseUrl": "http://%s:%d/v1" % (host, port), "models": MODELS}}
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        method, msg_id = msg.get("method"), msg.get("id")
        if method == "initialize":
            initialize(msg_id)
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {}})
        elif method == "exit":
            return
        elif msg_id is not None and method is not None:
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "no method " + method}})


main()
