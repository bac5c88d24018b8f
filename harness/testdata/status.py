#!/usr/bin/env python3
"""A YEP capability server for the status board's tests, standard library
only. Its tool "status" pushes status/changed with the text it is given,
then answers. STATUS_EXTRA_TOOL, when set, names a tool the handshake
serves beyond the approved manifest, so the clamp refuses it.
"""
import json
import os
import sys

capability_params = {}
if os.environ.get("STATUS_EXTRA_TOOL"):
    capability_params["tools"] = [{"name": "status"}, {"name": os.environ["STATUS_EXTRA_TOOL"]}]


def send(msg):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocol_version": "1.0", "name": "status",
            "capabilities": ["tools", "status"], "capability_params": capability_params}})
    elif method == "tool/call":
        text = str((params.get("args") or {}).get("text", ""))
        send({"jsonrpc": "2.0", "method": "status/changed", "params": {"text": text}})
        send({"jsonrpc": "2.0", "id": rid, "result": {"output": "ok"}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "exit":
        sys.exit(0)
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no method " + str(method)}})
