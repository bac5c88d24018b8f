"""The SDK's behaviour over real pipes: a server process on the SDK
(fixtures/behaviour_server.py) driven line by line, every line recorded
and validated against schema.json by `yolop ext validate-wire`."""
import os
import sys
import unittest

import support

SERVER = [sys.executable, os.path.join(support.FIXTURES, "behaviour_server.py")]
ALL_CAPS = ["tools", "streaming", "hooks", "prompt", "dynamic_prompt", "commands", "cancel", "status", "ui_ask", "log", "config", "workspace", "trace"]


class ServerTest(unittest.TestCase):
    def setUp(self):
        self.transcript = []
        self.host = support.Host(SERVER, self.transcript)
        self.addCleanup(self.host.kill)

    def finish(self):
        self.assertEqual(self.host.close(), 0, "".join(self.host.stderr))
        support.validate_wire(self, self.transcript)

    def call(self, name, args=None, rid=None, **extra):
        params = {"tool_call_id": "tc-%s" % name, "name": name, "args": args if args is not None else {}}
        params.update(extra)
        return self.host.request("tool/call", params, rid)

    def result(self, rid):
        msg, _ = self.host.response(rid)
        self.assertIn("result", msg, msg)
        return msg["result"]

    def error(self, rid):
        msg, _ = self.host.response(rid)
        self.assertIn("error", msg, msg)
        return msg["error"]

    def test_handshake_and_forward_compatibility(self):
        h = self.host
        self.assertEqual(self.error(self.call("init"))["code"], -32002)  # before initialize
        # No protocol_version (defaults to ours), unknown members and tokens.
        rid = h.request("initialize", {"session_id": "s1", "capabilities": ["tools", "telepathy", "status"],
                                       "future_member": {"x": 1}, "config": {"k": "v"}}, record=False)
        res = self.result(rid)
        self.assertEqual(res["protocol_version"], "1.1")
        self.assertEqual((res["name"], res["version"]), ("behave", "2.0.0"))
        self.assertEqual(res["capabilities"], ["tools", "streaming", "hooks", "prompt", "dynamic_prompt", "commands",
                                               "ui_ask", "trace", "cancel", "status", "log", "config"])
        cp = res["capability_params"]
        self.assertEqual(list(cp), sorted(cp))
        self.assertEqual(cp["prompt"], {"static": "static text", "dynamic": True})
        self.assertEqual(cp["hooks"], [{"event": "pre_tool_use", "matcher": "rm*"}, {"event": "pre_tool_use", "matcher": "*"},
                                       {"event": "post_tool_use", "matcher": "rm*", "timeout_ms": 1000, "on_error": "block"}])
        self.assertEqual(cp["commands"], [{"name": "hello", "description": "Say hello"}])
        self.assertIn({"name": "wait_for"}, cp["tools"])
        h.notify("initialized", {"extra": True})
        h.notify("some/future_notification", {"x": 1}, record=False)
        self.assertEqual(self.error(h.request("initialize", {"protocol_version": "1.0"}))["code"], -32600)  # twice
        err = self.error(h.request("some/future_method", {}, record=False))
        self.assertEqual(err["code"], -32601)
        self.assertIn("some/future_method", err["message"])
        self.assertEqual(self.error(h.request("tool/call", [1, 2], record=False))["code"], -32602)
        # The envelope: a missing "jsonrpc" is tolerated, a wrong one or a
        # case variant of a member is an invalid request.
        h.send({"id": 50, "method": "tool/call", "params": {"name": "init"}}, record=False)
        self.assertEqual(self.result(50)["output"], "s1 tools,telepathy,status")
        h.send({"jsonrpc": "1.0", "id": 51, "method": "tool/call", "params": {"name": "init"}}, record=False)
        self.assertEqual(self.error(51)["code"], -32600)
        h.send({"jsonrpc": "2.0", "id": 52, "method": "tool/call", "Params": {"name": "init"}}, record=False)
        self.assertEqual(self.error(52)["code"], -32600)
        self.assertEqual(self.result(self.call("init", None, extra_member=1))["output"], "s1 tools,telepathy,status")
        self.assertEqual(self.result(self.call("structured")), {"output": "two", "data": {"n": 2}})
        for _ in range(200):  # on_initialized runs on the events task
            seen = self.result(self.call("seen"))["output"]
            if seen.endswith("initialized"):
                break
        self.assertEqual(seen, "config {'k': 'v'};initialized")
        rid = h.request("shutdown", {})
        self.assertEqual(self.result(rid), {})
        self.assertEqual(self.error(self.call("init"))["code"], -32600)  # after shutdown
        h.notify("exit", {})
        h.proc.stdin.close()
        self.assertEqual(h.proc.wait(30), 0)
        support.validate_wire(self, self.transcript)

    def test_versions_and_refused_config(self):
        h = self.host
        err = self.error(h.request("initialize", {"protocol_version": "2.0", "capabilities": []}))
        self.assertEqual(err["code"], -32600)
        self.assertEqual(err["data"], {"protocol_version": "1.1", "min_protocol_version": "1.0"})
        self.assertEqual(self.error(h.request("initialize", {"protocol_version": "one"}))["code"], -32600)
        err = self.error(h.request("initialize", {"protocol_version": "1.0", "config": {"refuse": True}}))
        self.assertEqual(err["code"], -32602)
        self.assertIn("refused on purpose", err["message"])
        # A newer minor negotiates down to ours; a failed initialize left no session.
        self.assertEqual(self.result(h.request("initialize", {"protocol_version": "1.7"}))["protocol_version"], "1.1")
        self.finish()

    def test_many_calls_in_flight_and_cancellation(self):
        h = self.host
        h.handshake(ALL_CAPS)
        a = self.call("wait_for", {"name": "a"}, rid="req-a")  # a string id is echoed exactly
        b = self.call("wait_for", {"name": "b"})
        updates = []
        while len(updates) < 2:
            m = h.recv()
            self.assertEqual(m.get("method"), "tool/update", m)
            updates.append(m["params"])
        self.assertEqual(sorted([(u["request_id"], u["tool_call_id"], u["output"]) for u in updates], key=str),
                         sorted([("req-a", "tc-wait_for", "waiting for a"), (b, "tc-wait_for", "waiting for b")], key=str))
        # b finishes while a still waits: the calls run at once.
        self.assertEqual(self.result(self.call("release", {"name": "b"})), {"output": "ok"})
        self.assertEqual(self.result(b), {"output": "released b"})
        self.assertEqual(self.result(self.call("release", {"name": "a"})), {"output": "ok"})
        self.assertEqual(self.result("req-a"), {"output": "released a"})
        # Cancel: the call's task is cancelled and answered -32800.
        c = self.call("wait_for", {"name": "c"})
        h.until(lambda m: m.get("method") == "tool/update")
        cancel = h.request("cancel", {"id": c})
        self.assertEqual(self.result(cancel), {"cancelled": True})
        self.assertEqual(self.error(c), {"code": -32800, "message": "cancelled"})
        # A handler that swallows the cancellation is still answered -32800.
        s = self.call("swallow")
        h.until(lambda m: m.get("method") == "tool/update")
        self.assertEqual(self.result(h.request("cancel", {"id": s})), {"cancelled": True})
        msg, before = h.response(s)
        self.assertEqual(msg["error"]["code"], -32800)
        self.assertEqual(before, [], "a cancelled call streamed on")
        self.assertEqual(self.result(h.request("cancel", {"id": 999})), {"cancelled": False})
        self.assertEqual(self.result(self.call("release", {"name": "d"})), {"output": "ok"})
        self.finish()

    def test_failures(self):
        h = self.host
        h.handshake(ALL_CAPS)
        self.assertEqual(self.result(self.call("fail")), {"output": "it broke", "is_error": True})
        self.assertEqual(self.result(self.call("tool_error")), {"output": "bad input", "is_error": True})
        self.assertEqual(self.error(self.call("protocol_error")), {"code": -32003, "message": "not permitted here", "data": {"why": "test"}})
        self.assertEqual(self.result(self.call("undeclared_update"))["output"], "refused: NotDeclaredError")
        err = self.error(self.call("nope"))
        self.assertEqual(err["code"], -32602)
        self.assertIn('"nope"', err["message"])
        self.finish()

    def test_hooks_commands_prompt_config_trace_workspace(self):
        h = self.host
        h.handshake(ALL_CAPS)
        fire = lambda tool, args, event="pre_tool_use", **kw: h.request("hook/fire", dict({"event": event, "toolName": tool, "payload": dict({"tool_call_id": "t1", "args": args}, **kw)}))
        self.assertEqual(self.result(fire("rm", {"path": "/"})), {"decision": "block", "reason": "not the root"})
        self.assertEqual(self.result(fire("rm", {"path": "x"})), {"decision": "mutate", "reason": "made safe", "args": {"path": "x", "safe": True}})
        self.assertEqual(self.result(fire("ls", {"path": "x"})), {"decision": "allow"})
        err = self.error(fire("rm", {"path": "boom"}))
        self.assertEqual(err["code"], 0)
        self.assertIn("hook broke", err["message"])
        self.assertEqual(self.result(fire("rmdir", {}, "post_tool_use", result={"output": "gone"})),
                         {"decision": "mutate", "result": {"output": "[redacted] gone"}})
        # A firing that names its matcher runs that subscription only.
        rid = h.request("hook/fire", {"event": "pre_tool_use", "toolName": "rm", "matcher": "*", "payload": {"args": {"path": "/"}}})
        self.assertEqual(self.result(rid), {"decision": "allow"})
        self.assertEqual(self.result(h.request("command/execute", {"name": "behave:hello", "arguments": "you"})), {"success": True, "message": "hello you"})
        self.assertEqual(self.result(h.request("command/execute", {"name": "hello", "arguments": "fail"})), {"success": False, "message": "no hello today"})
        self.assertEqual(self.error(h.request("command/execute", {"name": "bye"}))["code"], -32602)
        self.assertEqual(self.result(h.request("prompt/contribution", {"session_id": "s", "turn": 3})), {"text": "turn 3"})
        self.assertEqual(self.result(h.request("config/changed", {"config": {"restart": True}})), {"status": "restart-required"})
        self.assertEqual(self.result(h.request("config/changed", {"config": {}})), {"status": "ok"})
        for t in ("turn.started", "tool.started", "turn.completed"):
            h.notify("trace/event", {"type": t, "session_id": "s", "future": 1})
        h.notify("workspace/changed", {"workspace_root": "/elsewhere"})
        want = "config None;initialized;second saw rm safe=True matcher=*;second saw ls safe=None matcher=*;second saw rm safe=None matcher=*;trace turn.started;trace tool.started;trace turn.completed;workspace /elsewhere"
        # Events run on their own task: ask until they have all been seen.
        for _ in range(200):
            got = self.result(self.call("seen"))["output"]
            if got.endswith("workspace /elsewhere"):
                break
        self.assertEqual(got, want)
        self.finish()

    def test_server_to_host_methods(self):
        h = self.host
        h.handshake(ALL_CAPS)
        rid = self.call("status", {"text": "busy"})
        m, _ = h.until(lambda m: m.get("method") == "status/changed")
        self.assertEqual(m["params"], {"text": "busy"})
        self.assertEqual(self.result(rid)["output"], "sent")
        rid = self.call("log")
        m, _ = h.until(lambda m: m.get("method") == "log")
        self.assertEqual(m["params"], {"level": "warn", "message": "a warning", "fields": {"n": 1, "err": "e"}})
        self.result(rid)
        rid = self.call("question")
        ask, _ = h.until(lambda m: m.get("method") == "ui/ask")
        self.assertEqual(ask["params"], {"prompt": "Pick one", "options": ["a", "b"]})
        h.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"answer": "b", "future": True}})
        self.assertEqual(self.result(rid)["output"], "picked b")
        # Cancelling a call while its question waits cancels the question too.
        rid = self.call("question")
        ask, _ = h.until(lambda m: m.get("method") == "ui/ask")
        self.assertEqual(self.result(h.request("cancel", {"id": rid})), {"cancelled": True})
        msgs = [h.recv(), h.recv()]
        cancel = next(m for m in msgs if m.get("method") == "cancel")
        self.assertEqual(cancel["params"], {"id": ask["id"]})
        self.assertEqual(next(m for m in msgs if "method" not in m)["error"]["code"], -32800)
        h.send({"jsonrpc": "2.0", "id": cancel["id"], "result": {"cancelled": True}})
        self.finish()

    def test_gated_on_the_host(self):
        h = self.host
        h.handshake(["tools", "cancel"])  # no streaming, status, ui_ask or log
        rid = self.call("status", {"text": "busy"})
        msg, before = h.response(rid)
        self.assertEqual(before, [])
        self.assertEqual(msg["result"]["output"], "not sent")
        rid = self.call("question")
        res = self.result(rid)
        self.assertTrue(res.get("is_error"), res)
        self.assertIn("not advertised", res["output"])
        rid = self.call("log")
        msg, before = h.response(rid)
        self.assertEqual(before, [])
        rid = self.call("wait_for", {"name": "e"})
        self.result(self.call("release", {"name": "e"}))
        msg, before = h.response(rid)
        self.assertEqual(before, [])  # no tool/update without "streaming"
        self.assertEqual(msg["result"], {"output": "released e"})
        self.finish()


if __name__ == "__main__":
    unittest.main()
