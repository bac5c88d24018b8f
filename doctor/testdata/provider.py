#!/usr/bin/env python3
"""A YEP capability server that offers a model provider, for the doctor
tests (standard library only).

On initialize it starts an OpenAI-compatible endpoint on 127.0.0.1 (a
port the kernel picks) in a thread, serving GET /v1/models and a streamed
POST /v1/chat/completions that answers "pong", and announces it in
capability_params.provider. PROVIDER_MODELS (comma-separated, default
"scripted-1") are the models it announces and serves.

PROVIDER_MODE chooses a fault:

  unapproved   also announces (and serves) the model "gpt-unapproved".
  remote       announces http://10.0.0.1:80/v1, which is not loopback.
  localhost    announces http://localhost:<port>/v1: a name, not an IP.
  no_done      the stream ends without "data: [DONE]".
  not_stream   chat/completions answers one JSON body, not an event
               stream.
  models_short GET /v1/models lists none of the models.
  silent       announces nothing (no provider token, no params).
"""
import http.server
import json
import os
import sys
import threading

mode = os.environ.get("PROVIDER_MODE", "")
models = [m for m in os.environ.get("PROVIDER_MODELS", "scripted-1").split(",") if m]
if mode == "unapproved":
    models.append("gpt-unapproved")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("provider: " + (fmt % args) + "\n")

    def reply(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path != "/v1/models":
            self.reply(404, "application/json", b'{"error":{"message":"not found"}}')
            return
        listed = [] if mode == "models_short" else models
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "provider.py"} for m in listed]
        self.reply(200, "application/json", json.dumps({"object": "list", "data": data}).encode())

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        if self.path != "/v1/chat/completions":
            self.reply(404, "application/json", b'{"error":{"message":"not found"}}')
            return
        req = json.loads(body or b"{}")
        model = req.get("model", "")
        if model not in models:
            self.reply(404, "application/json", json.dumps({"error": {"message": "unknown model %s" % model}}).encode())
            return
        if mode == "not_stream" or not req.get("stream"):
            msg = {"id": "c1", "object": "chat.completion", "created": 0, "model": model,
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": "pong"}, "finish_reason": "stop"}]}
            self.reply(200, "application/json", json.dumps(msg).encode())
            return
        chunks = [
            {"role": "assistant", "content": "po"},
            {"content": "ng"},
        ]
        events = []
        for i, delta in enumerate(chunks):
            events.append({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        events.append({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model,
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        out = "".join("data: %s\n\n" % json.dumps(e) for e in events)
        if mode != "no_done":
            out += "data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(out.encode())))
        self.end_headers()
        self.wfile.write(out.encode())


server = None


def start_endpoint():
    global server
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def initialize():
    port = start_endpoint()
    base = "http://127.0.0.1:%d/v1" % port
    if mode == "remote":
        base = "http://10.0.0.1:80/v1"
    elif mode == "localhost":
        base = "http://localhost:%d/v1" % port
    res = {"protocol_version": "1.0", "name": "provider-" + (mode or "ok"), "version": "0.0.1",
           "capabilities": ["provider"], "capability_params": {"provider": {"baseUrl": base, "models": models}}}
    if mode == "silent":
        res["capabilities"], res["capability_params"] = [], {}
    return res


def send(msg):
    msg["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    method = msg.get("method")
    if method is None:
        continue
    if "id" not in msg:
        if method == "exit":
            break
        continue
    if method == "initialize":
        send({"id": msg["id"], "result": initialize()})
    elif method == "shutdown":
        send({"id": msg["id"], "result": {}})
    elif method == "cancel":
        send({"id": msg["id"], "result": {"cancelled": False}})
    else:
        send({"id": msg["id"], "error": {"code": -32601, "message": "method %s not found" % method}})
if server is not None:
    server.shutdown()
sys.exit(0)
