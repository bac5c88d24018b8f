#!/usr/bin/env python3
"""A raw-protocol YEP capability server for the host tests (std lib only).

Its behaviour is chosen by the JSON in the YEP_TEST_SPEC environment
variable: the handshake it answers and a fault mode.
"""
import json
import os
import sys
import threading
import time

spec = json.loads(os.environ.get("YEP_TEST_SPEC", "{}"))
mode = spec.get("mode", "normal")
out_lock = threading.Lock()
inflight = {}  # request id (json text) -> threading.Event
next_id = [1000]
waiting = {}  # our request id -> [event, response]


def send(msg):
    line = json.dumps(msg, separators=(",", ":"))
    with out_lock:
        if mode == "garbage":
            sys.stdout.write("this is not json\n")
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def reply(rid, result):
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def error(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def call_host(method, params):
    next_id[0] += 1
    rid = next_id[0]
    ev = threading.Event()
    waiting[rid] = [ev, None]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    ev.wait(30)
    return waiting.pop(rid)[1]


def notify(method, params):
    send({"jsonrpc": "2.0", "method": method, "params": params})


def handshake(rid, params):
    if mode == "hang":
        return  # never answers
    if mode == "flood_init":
        with out_lock:
            for i in range(20000):
                sys.stdout.write("loading %d\n" % i)
            sys.stdout.flush()
    if mode == "exit_init":
        sys.stderr.write("fatal: cannot initialize\n")
        sys.stderr.flush()
        os._exit(7)
    with open(spec["init_file"], "w") if spec.get("init_file") else open(os.devnull, "w") as f:
        f.write(json.dumps({"params": params, "env": dict(os.environ)}))
    reply(rid, {
        "protocol_version": spec.get("protocol_version", "1.0"),
        "name": spec.get("name", "pyserver"),
        "capabilities": spec.get("capabilities", ["tools", "streaming", "cancel"]),
        "capability_params": spec.get("capability_params", {}),
    })


def tool_call(rid, params):
    name = params.get("name")
    args = params.get("args") or {}
    cancelled = inflight[json.dumps(rid)]
    if name == "echo":
        reply(rid, {"output": str(args.get("text", ""))})
    elif name == "stream":
        for i in range(int(args.get("n", 3))):
            if cancelled.is_set():
                error(rid, -32800, "cancelled")
                return
            notify("tool/update", {"request_id": rid, "output": "chunk %d\n" % i})
            time.sleep(float(args.get("delay", 0)))
        reply(rid, {"output": "streamed"})
    elif name == "slow":
        notify("log", {"level": "info", "message": "slow started"})
        if cancelled.wait(30):
            notify("log", {"level": "info", "message": "slow cancelled"})
            error(rid, -32800, "cancelled")
        else:
            reply(rid, {"output": "slow done"})
    elif name == "crash":
        sys.stderr.write("panic: something broke\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "huge":
        with out_lock:
            sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"output":"' % json.dumps(rid))
            chunk = "x" * (1 << 20)
            for _ in range(50):
                sys.stdout.write(chunk)
            sys.stdout.write('"}}\n')
            sys.stdout.flush()
    elif name == "ask":
        res = call_host("ui/ask", {"prompt": args.get("prompt", "?"), "secret": bool(args.get("secret"))})
        if "error" in res:
            reply(rid, {"output": "ask error: %s" % res["error"].get("message"), "is_error": True})
        else:
            r = res["result"]
            reply(rid, {"output": "cancelled" if r.get("cancelled") else "answer: " + r.get("answer", "")})
    elif name == "status":
        notify("status/changed", {"text": args.get("text", "")})
        reply(rid, {"output": "ok"})
    elif name == "log":
        notify("log", {"level": "warn", "message": args.get("message", ""), "fields": {"k": "v"}})
        reply(rid, {"output": "ok"})
    elif name == "flood":
        # Writes n lines that are not JSON to stdout, then answers.
        with out_lock:
            for i in range(int(args.get("n", 1))):
                sys.stdout.write("garbage %d\n" % i)
            sys.stdout.flush()
        reply(rid, {"output": "flooded"})
    elif name == "notify_flood":
        # Sends n notifications of the method and params given, then answers.
        line = json.dumps({"jsonrpc": "2.0", "method": args["method"], "params": args.get("params", {})},
                          separators=(",", ":")) + "\n"
        with out_lock:
            for _ in range(int(args.get("n", 1))):
                sys.stdout.write(line)
            sys.stdout.flush()
        reply(rid, {"output": "flooded"})
    elif name == "raw_reply":
        # Answers with the line given, "$ID" replaced by the request id: a
        # way to send a malformed response.
        with out_lock:
            sys.stdout.write(args["line"].replace("$ID", json.dumps(rid)) + "\n")
            sys.stdout.flush()
    elif name == "env":
        reply(rid, {"output": json.dumps(dict(os.environ))})
    elif name == "params":
        reply(rid, {"output": json.dumps(params)})
    else:
        error(rid, -32601, "no tool %s" % name)


def hook_fire(rid, params):
    if spec.get("hook_file"):
        with open(spec["hook_file"], "a") as f:
            f.write(json.dumps(params) + "\n")
    payload = params.get("payload") or {}
    text = json.dumps(payload.get("args"))
    if params.get("event") == "post_tool_use":
        if "mutate" in text:
            reply(rid, {"decision": "mutate", "result": {"output": "mutated result"}})
        else:
            reply(rid, {"decision": "allow"})
        return
    if "hang" in text:
        time.sleep(30)
        return
    if "crashhook" in text:
        os._exit(5)
    if "deny" in text:
        reply(rid, {"decision": "deny"})
        return
    if "forbidden" in text:
        reply(rid, {"decision": "block", "reason": "forbidden word"})
    elif "mutate" in text:
        reply(rid, {"decision": "mutate", "args": {"text": "mutated args"}})
    else:
        reply(rid, {"decision": "allow"})


turns = [0]


def handle(msg):
    method = msg.get("method")
    rid = msg.get("id")
    params = msg.get("params") or {}
    key = json.dumps(rid)
    try:
        if method == "initialize":
            handshake(rid, params)
        elif method == "tool/call":
            tool_call(rid, params)
        elif method == "hook/fire":
            hook_fire(rid, params)
        elif method == "prompt/contribution":
            if spec.get("prompt_fail_after") is not None and turns[0] >= spec["prompt_fail_after"]:
                time.sleep(5)
                return
            turns[0] += 1
            reply(rid, {"text": "dynamic turn %d" % params.get("turn", 0)})
        elif method == "command/execute":
            reply(rid, {"success": True, "message": "ran %s with %s" % (params.get("name"), params.get("arguments", ""))})
        elif method == "config/changed":
            cfg = params.get("config") or {}
            reply(rid, {"status": "restart-required" if cfg.get("restart") else "ok"})
        elif method == "shutdown":
            reply(rid, {})
        elif rid is not None:
            error(rid, -32601, "method %s not found" % method)
    finally:
        inflight.pop(key, None)


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        method = msg.get("method")
        if method is None:
            w = waiting.get(msg.get("id"))
            if w:
                w[1] = msg
                w[0].set()
            continue
        if method == "exit":
            os._exit(0)
        if method == "trace/event":
            if spec.get("trace_file"):
                with open(spec["trace_file"], "a") as f:
                    f.write(json.dumps(msg["params"]) + "\n")
            continue
        if method == "initialized":
            if mode == "noread":
                time.sleep(3600)
            if mode == "huge_init":
                pass
            continue
        if method == "workspace/changed":
            if spec.get("workspace_file"):
                with open(spec["workspace_file"], "w") as f:
                    f.write(msg["params"]["workspace_root"])
            continue
        if method == "cancel":
            ev = inflight.get(json.dumps(msg["params"]["id"]))
            if ev:
                ev.set()
            reply(msg["id"], {"cancelled": ev is not None})
            continue
        if "id" in msg:
            inflight[json.dumps(msg["id"])] = threading.Event()
        threading.Thread(target=handle, args=(msg,), daemon=True).start()
    os._exit(0)


main()
