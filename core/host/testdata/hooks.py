#!/usr/bin/env python3
"""A raw-protocol YEP server that only serves hooks (std lib only), for the
lifecycle hook tests of core/host, agent and doctor.

YEP_HOOKS_SPEC is JSON: {"events": {event: behaviour}, "log": path}.
Each hook/fire's params are appended to the log, one JSON line each.
Behaviours: allow, block:REASON, context:TEXT, hang (never answers),
crash (the process exits), garbage (a result that is no object), empty
(a result without a decision), guard (blocks a prompt that says "secret",
else adds context).
"""
import json
import os
import sys

spec = json.loads(os.environ.get("YEP_HOOKS_SPEC", "{}"))
events = spec.get("events", {})


def send(msg):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def reply(rid, result):
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def fire(rid, params):
    if spec.get("log"):
        with open(spec["log"], "a") as f:
            f.write(json.dumps(params) + "\n")
    how = events.get(params.get("event"), "allow")
    kind, _, arg = how.partition(":")
    if kind == "hang":
        return
    if kind == "crash":
        sys.stderr.write("hook crashed\n")
        sys.stderr.flush()
        os._exit(3)
    if kind == "garbage":
        reply(rid, "not a decision")
    elif kind == "empty":
        reply(rid, {})
    elif kind == "block":
        reply(rid, {"decision": "block", "reason": arg})
    elif kind == "context":
        reply(rid, {"decision": "allow", "context": arg})
    elif kind == "guard":
        prompt = (params.get("payload") or {}).get("prompt", "")
        if "secret" in prompt:
            reply(rid, {"decision": "block", "reason": "prompts must not carry secrets"})
        else:
            reply(rid, {"decision": "allow", "context": "guard checked the prompt"})
    else:
        reply(rid, {"decision": "allow"})


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        reply(rid, {"protocol_version": "1.0", "name": spec.get("name", "hooks"), "capabilities": ["hooks"]})
    elif method == "hook/fire":
        fire(rid, msg.get("params") or {})
    elif method == "shutdown":
        reply(rid, {})
    elif method == "exit":
        break
    elif rid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method %s not found" % method}})
