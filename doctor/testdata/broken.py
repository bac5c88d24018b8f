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
  command_error   the command "go" fails with an internal error (-32603).
  command_shape   the command "go" answers {"success": "yes"}: the schema
                  wants a boolean.
  config_bad      declares config and answers config/changed with
                  {"status": "maybe"}, neither ok nor restart-required.
  config_restart  declares config and answers config/changed with
                  restart-required (not broken: a restart applies it).
  ask_bad         every tool call first sends ui/ask {"prompt": 5}: the
                  schema wants a string.
  ask_undeclared  every tool call first sends ui/ask, though initialize
                  does not declare ui_ask.
  status_bad      every tool call first sends status/changed {"text": 5}.
  status_undeclared
                  every tool call first sends status/changed, though
                  initialize does not declare status.
"""
import collections
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
    if mode.startswith("command_"):
        caps.append("commands")
        params["commands"] = [{"name": "go"}]
    if mode.startswith("config_"):
        caps.append("config")
    if mode == "ask_bad":
        caps.append("ui_ask")
    if mode == "status_bad":
        caps.append("status")
    return {"protocol_version": "1.0", "name": "broken-" + mode, "version": "0.0.1",
            "capabilities": caps, "capability_params": params}


def hook_fire(params):
    if mode == "deny":
        return {"decision": "deny", "reason": "bash is not allowed"}
    if recovering:
        return {"decision": "allow", "reason": "recovery mode: allowing everything"}
    return {"decision": "block", "reason": "bash is not allowed"}


# Messages read while waiting for the answer to a ui/ask, handled after it.
queued = collections.deque()


def ask(prompt):
    """Sends ui/ask and waits for the host's answer."""
    send({"id": "ask-1", "method": "ui/ask", "params": {"prompt": prompt}})
    while True:
        line = sys.stdin.readline()
        if not line:
            return None
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("id") == "ask-1" and "method" not in msg:
            return msg
        queued.append(msg)


def tool_call(params):
    if mode == "ask_bad":
        ask(5)
    elif mode == "ask_undeclared":
        ask("proceed?")
    elif mode == "status_bad":
        send({"method": "status/changed", "params": {"text": 5}})
    elif mode == "status_undeclared":
        send({"method": "status/changed", "params": {"text": "busy"}})
    text = (params.get("args") or {}).get("text", "")
    if mode == "invalid_result":
        return {"output": 42}
    return {"output": text}


class RpcError(Exception):
    pass


def handle(method, params):
    if method == "initialize":
        return initialize()
    if method == "tool/call":
        return tool_call(params)
    if method == "command/execute":
        if mode == "command_error":
            raise RpcError("the command handler is broken on purpose")
        return {"success": "yes"}
    if method == "config/changed":
        return {"status": "restart-required" if mode == "config_restart" else "maybe"}
    if method == "hook/fire":
        return hook_fire(params)
    if method == "cancel":
        return {"cancelled": False}
    if method == "shutdown":
        return {}
    raise LookupError(method)


def messages():
    """Yields every message from the host, queued ones first."""
    while True:
        while queued:
            yield queued.popleft()
        line = sys.stdin.readline()
        if not line:
            return
        if line.strip():
            yield json.loads(line)


for msg in messages():
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
    except RpcError as e:
        send({"id": msg["id"], "error": {"code": -32603, "message": str(e)}})
clean_exit()
