#!/usr/bin/env python3
"""A tiny YEP capability server on the raw protocol, standard library
only, for the record-and-replay tests: one tool, "shout", that answers its
text in capitals followed by SUFFIX. The tests change SUFFIX to make a new
build answer differently.
"""

import json
import sys

SUFFIX = "!"


def send(msg):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    method, msg_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg_id, "result": {
            "protocol_version": "1.0", "name": "shouter", "version": "0.1.0",
            "capabilities": ["tools"],
            "tools": [{"name": "shout", "description": "Answer the text in capitals.",
                       "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}]}})
    elif method == "tool/call":
        text = (params.get("args") or {}).get("text", "")
        send({"jsonrpc": "2.0", "id": msg_id, "result": {"output": text.upper() + SUFFIX}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": msg_id, "result": None})
    elif method == "exit":
        break
    elif msg_id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "method not found: " + method}})
