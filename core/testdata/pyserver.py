#!/usr/bin/env python3
"""A YEP capability server written against the raw protocol, standard
library only, to prove the protocol is language neutral.

Newline-delimited JSON-RPC 2.0 on stdin/stdout; logs go to stderr. It serves
the initialize handshake, a plain tool "echo", a streaming tool "count"
that sends tool/update notifications correlated by request_id, cancel (the
aborted call answers error code -32800 "cancelled"), shutdown and exit.
Requests run on their own threads so a cancel can reach a running count.
"""

import json
import sys
import threading
import time

PROTOCOL_VERSION = "1.0"
CANCELLED = -32800
NOT_INITIALIZED = -32002
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601

write_lock = threading.Lock()
state_lock = threading.Lock()
inflight = {}  # json.dumps(id) -> threading.Event
host_caps = set()
initialized = False


def send(msg):
    line = json.dumps(msg, separators=(",", ":"))
    with write_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def reply(msg_id, result):
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def fail(msg_id, code, message):
    send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def log(*args):
    print("pyserver:", *args, file=sys.stderr, flush=True)


def initialize(msg_id, params):
    global initialized
    theirs = str(params.get("protocol_version") or PROTOCOL_VERSION)
    if theirs.split(".")[0] != PROTOCOL_VERSION.split(".")[0]:
        fail(msg_id, -32600, "host protocol version %s is incompatible with %s" % (theirs, PROTOCOL_VERSION))
        return
    host_caps.update(params.get("capabilities") or [])
    initialized = True
    reply(msg_id, {
        "protocol_version": PROTOCOL_VERSION,
        "name": "pyecho",
        "version": "0.1.0",
        "capabilities": ["tools", "streaming", "cancel"],
        "capability_params": {"tools": [{"name": "echo"}, {"name": "count"}]},
        "unknown_future_field": {"ignored": True},
    })


def tool_call(msg_id, params, cancelled):
    name = params.get("name")
    args = params.get("args") or {}
    if name == "echo":
        reply(msg_id, {"output": str(args.get("text", ""))})
        return
    if name == "count":
        n = int(args.get("n", 3))
        delay = int(args.get("delay_ms", 10)) / 1000.0
        for i in range(1, n + 1):
            if cancelled.wait(delay):
                fail(msg_id, CANCELLED, "cancelled")
                return
            if "streaming" in host_caps:
                send({"jsonrpc": "2.0", "method": "tool/update", "params": {
                    "request_id": msg_id, "tool_call_id": params.get("tool_call_id", ""), "output": str(i)}})
        reply(msg_id, {"output": "counted to %d" % n})
        return
    fail(msg_id, INVALID_PARAMS, "pyecho has no tool %r" % name)


def run_request(msg_id, method, params):
    key = json.dumps(msg_id)
    cancelled = threading.Event()
    with state_lock:
        inflight[key] = cancelled
    try:
        if method == "tool/call":
            tool_call(msg_id, params, cancelled)
        else:
            fail(msg_id, METHOD_NOT_FOUND, "pyecho does not serve %s" % method)
    except Exception as e:  # a handler bug must not kill the server
        fail(msg_id, -32603, "pyecho: %s failed: %s" % (method, e))
    finally:
        with state_lock:
            inflight.pop(key, None)


def main():
    threads = []
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            log("skipping a line that is not JSON")
            continue
        if "method" not in msg:
            continue  # a response: this server sends no requests
        method, msg_id, params = msg["method"], msg.get("id"), msg.get("params") or {}
        if msg_id is None:
            if method == "exit":
                break
            continue  # initialized and other notifications
        if method == "initialize":
            initialize(msg_id, params)
        elif method == "cancel":
            with state_lock:
                ev = inflight.get(json.dumps(params.get("id")))
            if ev is not None:
                ev.set()
            reply(msg_id, {"cancelled": ev is not None})
        elif method == "shutdown":
            reply(msg_id, {})
        elif not initialized:
            fail(msg_id, NOT_INITIALIZED, "%s before initialize" % method)
        else:
            t = threading.Thread(target=run_request, args=(msg_id, method, params), daemon=True)
            t.start()
            threads.append(t)
    for ev in list(inflight.values()):
        ev.set()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
