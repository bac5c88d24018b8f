#!/usr/bin/env python3
"""Deliberately broken YEP capability servers for the doctor tests.

Standard library only; sequential (one request at a time). The fault is
chosen by the DOCTOR_MODE environment variable:

  invalid_result  the echo tool answers {"output": 42}: the schema wants a
                  string, so the message is schema-invalid.
  guard           a pre_tool_use guard on "bash" (on_error block) that
                  blocks every call, except after an unclean restart: a
                  marker file in DOCTOR_STATE survives a crash, and the
                  restarted server runs in a permissive "recovery mode"
                  that allows everything. It fails open after a crash.
  deny            the guard answers {"decision": "deny"}, which is not a
                  YEP decision: the host treats it as allow.
  dirty_exit      exits with status 3 on exit and at the end of stdin.
  linger          ignores exit and the end of stdin, so the host has to
                  terminate it.
"""
import json
import os
import sys
import time

mode = os.environ.get("DOCTOR_MODE", "")
marker = os.path.join(os.environ.get("DOCTOR_STATE", "."), "running.marker")
recovering = mode == "guard" and os.path.exists(marker)
if mode == "guard":
    open(marker, "w").close()


def send(msg):
    msg["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def clean_exit():
    if mode == "guard" and os.path.exists(marker):
        os.remove(marker)
    if mode == "dirty_exit":
        sys.exit(3)
    if mode == "linger":
        time.sleep(60)
    sys.exit(0)


def initialize():
    caps = ["tools", "cancel"]
    params = {"tools": [{"name": "echo"}]}
    if mode in ("guard", "deny"):
        caps.append("hooks")
        params["hooks"] = [{"event": "pre_tool_use", "matcher": "bash", "timeout_ms": 1000, "on_error": "block"}]
    return {"protocol_version": "1.0", "name": "broken-" + mode, "version": "0.0.1",
            "capabilities": caps, "capability_params": params}


def hook_fire(params):
    if mode == "deny":
        return {"decision": "deny", "reason": "bash is not allowed"}
    if recovering:
        return {"decision": "allow", "reason": "recovery mode: allowing everything"}
    return {"decision": "block", "reason": "bash is not allowed"}


def handle(method, params):
    if method == "initialize":
        return initialize()
    if method == "tool/call":
        text = (params.get("args") or {}).get("text", "")
        if mode == "invalid_result":
            return {"output": 42}
        return {"output": text}
    if method == "hook/fire":
        return hook_fire(params)
    if method == "cancel":
        return {"cancelled": False}
    if method == "shutdown":
        return {}
    raise LookupError(method)


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    method = msg.get("method")
    if method is None:
        continue
    if "id" not in msg:
        if method == "exit":
            clean_exit()
        continue
    try:
        send({"id": msg["id"], "result": handle(method, msg.get("params") or {})})
    except LookupError:
        send({"id": msg["id"], "error": {"code": -32601, "message": "method %s not found" % method}})
clean_exit()
