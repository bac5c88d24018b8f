#!/usr/bin/env python3
"""A YEP capability server for the terminal UI's end-to-end test (std lib only).

Tools:
  status {text}                    pushes status/changed with the text
  ask {prompt, secret?, options?}  asks the user through ui/ask; a secret
                                   answer comes back only as its length
                                   and the start of its SHA-256, so the
                                   secret itself never reaches the screen
"""
import hashlib
import json
import sys
import threading

out_lock = threading.Lock()
next_id = [1000]
waiting = {}  # our request id -> [event, response]


def send(msg):
    line = json.dumps(msg, separators=(",", ":"))
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def reply(rid, result):
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def call_host(method, params):
    with out_lock:
        next_id[0] += 1
        rid = next_id[0]
    ev = threading.Event()
    waiting[rid] = [ev, None]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    ev.wait()
    return waiting.pop(rid)[1]


def tool_call(rid, params):
    name = params.get("name")
    args = params.get("args") or {}
    if name == "status":
        send({"jsonrpc": "2.0", "method": "status/changed", "params": {"text": args.get("text", "")}})
        reply(rid, {"output": "ok"})
    elif name == "ask":
        q = {"prompt": args.get("prompt", "?"), "secret": bool(args.get("secret"))}
        if args.get("options"):
            q["options"] = args["options"]
        res = call_host("ui/ask", q)
        if "error" in res:
            reply(rid, {"output": "ask error: %s" % res["error"].get("message"), "is_error": True})
            return
        r = res["result"]
        answer = r.get("answer", "")
        if r.get("cancelled"):
            reply(rid, {"output": "cancelled"})
        elif q["secret"]:
            digest = hashlib.sha256(answer.encode()).hexdigest()[:12]
            reply(rid, {"output": "got a secret of %d characters, sha256 %s" % (len(answer), digest)})
        else:
            reply(rid, {"output": "answer: " + answer})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no tool %s" % name}})


def handle(msg):
    method = msg.get("method")
    rid = msg.get("id")
    params = msg.get("params") or {}
    if method == "initialize":
        reply(rid, {"protocol_version": "1.0", "name": "tuiext", "capabilities": ["tools", "ui_ask", "status"]})
    elif method == "tool/call":
        tool_call(rid, params)
    elif method == "cancel":
        reply(rid, {"cancelled": False})  # its calls do not run long
    elif method == "shutdown":
        reply(rid, {})
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method %s not found" % method}})


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        method = msg.get("method")
        if method is None:  # a response to one of our requests
            w = waiting.get(msg.get("id"))
            if w:
                w[1] = msg
                w[0].set()
            continue
        if method == "exit":
            break
        if "id" not in msg:
            continue  # initialized, cancel, trace/event: nothing to do
        threading.Thread(target=handle, args=(msg,), daemon=True).start()


main()
