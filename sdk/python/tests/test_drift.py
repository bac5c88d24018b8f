"""The drift-guard table: the methods the SDK handles cover every method
meta.json gives the server, and the capabilities it can advertise are
meta.json's tokens."""
import asyncio
import sys
import unittest

import support

sys.path.insert(0, support.SDK)

from yolop_sdk import Server, meta  # noqa: E402


def full_server():
    """A server with every facet the SDK registers."""
    s = Server("full", "1.0.0", status=True, ui_ask=True, log=True)
    s.tool("plain", lambda call: "")
    s.tool("streamed", lambda call: "", streaming=True)
    s.on_hook("pre_tool_use", "*", lambda ev: None)
    s.on_hook("post_tool_use", "plain", lambda ev: None, timeout_ms=5, on_error="block")
    s.prompt("static")
    s.dynamic_prompt(lambda p: "")
    s.command("c", "a command", lambda a: "")
    s.mcp_server({"name": "m", "type": "stdio", "command": "m"})
    s.on_config(lambda c: None)
    s.on_config_changed(lambda c: False)
    s.on_trace(lambda e: None)
    s.on_workspace_changed(lambda r: None)
    s.on_initialized(lambda: None)
    return s


class DriftTest(unittest.TestCase):
    def test_handled_methods_cover_meta(self):
        served = {m["name"] for m in support.load_meta()["methods"] if m["direction"] in ("host_to_server", "both")}
        self.assertTrue(served, "meta.json lists no methods for the server")
        missing = served - set(Server.HANDLED_METHODS)
        self.assertEqual(missing, set(), "methods meta.json gives the server that the SDK does not handle")

    def test_advertised_capabilities_are_meta_tokens(self):
        tokens = support.load_meta()["capabilities"]
        caps = full_server().capabilities()
        self.assertEqual(set(caps) - set(tokens), set())
        # In meta.json's canonical order.
        self.assertEqual(caps, [t for t in tokens if t in caps])
        # Every token but the provider's (not an SDK facet) and the host's
        # own (workspace) is reachable.
        self.assertEqual(set(tokens) - set(caps), {"provider", "workspace"})

    def test_server_to_host_methods_are_meta_methods(self):
        outgoing = {m["name"]: m["capability"] for m in support.load_meta()["methods"] if m["direction"] in ("server_to_host", "both")}
        self.assertEqual(outgoing, {"tool/update": "streaming", "cancel": "cancel", "ui/ask": "ui_ask", "status/changed": "status", "log": "log"},
                         "meta.json's server-to-host methods changed: teach the SDK the new ones")

    def test_every_host_request_is_answered_not_unknown(self):
        """Each host-to-server request reaches a handler of a full server
        (none answers -32601)."""
        import json
        s = full_server()
        out = []
        requests = [m for m in meta.METHODS if m.direction != "server_to_host" and m.kind == "request" and m.name != "initialize"]
        params = {"tool/call": {"name": "plain"}, "hook/fire": {"event": "pre_tool_use", "toolName": "plain"},
                  "command/execute": {"name": "c"}, "cancel": {"id": 999}, "config/changed": {"config": {}},
                  "prompt/contribution": {"turn": 1}}
        lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}]
        for i, m in enumerate(requests, 2):
            lines.append({"jsonrpc": "2.0", "id": i, "method": m.name, "params": params.get(m.name, {})})

        async def run():
            reader = asyncio.StreamReader()
            for l in lines:
                reader.feed_data(json.dumps(l).encode() + b"\n")

            def write(b):
                out.append(b)
                if len(out) == len(lines):
                    reader.feed_eof()  # every request answered

            await s.serve_async(reader, write)

        asyncio.run(run())
        answers = {json.loads(b)["id"]: json.loads(b) for b in out}
        self.assertEqual(len(answers), len(lines))
        for i, m in enumerate(requests, 2):
            self.assertIn("result", answers[i], (m.name, answers[i]))

    def test_registry_refuses_mistakes(self):
        s = Server("x", "1")
        s.tool("t", lambda c: "")
        with self.assertRaises(ValueError):
            s.tool("t", lambda c: "")
        with self.assertRaises(ValueError):
            s.on_hook("pre_tool_use", "*", lambda e: None, on_error="explode")
        s.command("c", "", lambda a: "")
        with self.assertRaises(ValueError):
            s.command("c", "", lambda a: "")
        async def serve_nothing():
            reader = asyncio.StreamReader()
            reader.feed_eof()
            await s.serve_async(reader, lambda b: None)

        asyncio.run(serve_nothing())
        with self.assertRaises(RuntimeError):
            s.tool("late", lambda c: "")
        with self.assertRaises(RuntimeError):
            asyncio.run(serve_nothing())


if __name__ == "__main__":
    unittest.main()
