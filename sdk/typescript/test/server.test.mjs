// The SDK's behaviour over a real pipe, against the "full" fixture server.
// Every dialogue is recorded; the last test validates all of them against
// schema.json with `yolop ext validate-wire`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Host, fixture, tempDir, yolop } from "./helpers.mjs";

const transcripts = join(tempDir(), "wire.txtar");
let recorded = 0;

/** Starts the full fixture; the dialogue is recorded under name when the test ends. */
/** A test whose host sends malformed messages on purpose passes record: false. */
function start(t, env = {}, { record = true } = {}) {
  const h = new Host([fixture, "full"], { env });
  t.after(() => {
    h.proc.kill();
    if (!record) return;
    h.record(transcripts, t.name);
    recorded++;
  });
  return h;
}

const ok = (m) => m.result;

test("initialize answers the capabilities in the canonical order and capability_params with every facet", async (t) => {
  const h = start(t);
  const res = await h.initialize();
  assert.deepEqual(res.result.capabilities, ["tools", "streaming", "hooks", "prompt", "dynamic_prompt", "commands", "ui_ask", "trace", "cancel", "status", "log", "config"]);
  assert.equal(res.result.protocol_version, "1.0");
  assert.equal(res.result.name, "full");
  assert.equal(res.result.version, "2.0.0");
  const cp = res.result.capability_params;
  assert.deepEqual(Object.keys(cp), ["commands", "hooks", "prompt", "tools"]);
  assert.deepEqual(cp.prompt, { static: "static text", dynamic: true });
  assert.deepEqual(cp.hooks[0], { event: "pre_tool_use", matcher: "rm*", timeout_ms: 500, on_error: "block" });
  assert.deepEqual(cp.hooks[1], { event: "pre_tool_use", matcher: "*" });
  assert.deepEqual(cp.commands, [{ name: "greet", description: "Greet someone" }, { name: "fail" }]);
  assert.ok(cp.tools.some((x) => x.name === "echo"));
  const { res: bye, code } = await h.close();
  assert.deepEqual(bye.result, {});
  assert.equal(code, 0);
});

test("forward compatibility: unknown fields ignored and a missing protocol_version defaults", async (t) => {
  const h = start(t, {}, { record: false });
  const res = await h.call("initialize", { future_field: { x: 1 }, capabilities: ["tools", "teleport"] });
  assert.equal(res.result.protocol_version, "1.1");
  h.notify("initialized", { also_new: true });
  h.notify("future/notification", { a: 1 });
  const echo = await h.call("tool/call", { name: "echo", args: { text: "hi", extra: 1 }, new_member: [1] });
  assert.deepEqual(echo.result, { output: "hi" });
  // init() keeps what the host sent, unknown members too.
  const init = await h.call("tool/call", { name: "init" });
  assert.deepEqual(JSON.parse(init.result.output).future_field, { x: 1 });
  await h.close();
});

test("a host of another major is refused with -32600 and the versions in data", async (t) => {
  const h = start(t);
  const res = await h.call("initialize", { protocol_version: "2.0" });
  assert.equal(res.error.code, -32600);
  assert.match(res.error.message, /incompatible/);
  assert.deepEqual(res.error.data, { protocol_version: "1.1", min_protocol_version: "1.0" });
});

test("a request before initialize is -32002; initialize twice is -32600; an unknown method is -32601", async (t) => {
  const h = start(t, {}, { record: false });
  const early = await h.call("tool/call", { name: "echo" });
  assert.equal(early.error.code, -32002);
  await h.initialize();
  const again = await h.call("initialize", {});
  assert.equal(again.error.code, -32600);
  const unknown = await h.call("teleport", {});
  assert.equal(unknown.error.code, -32601);
  assert.match(unknown.error.message, /does not serve method "teleport"/);
  await h.close();
});

test("after shutdown only shutdown is served; exit ends serve()", async (t) => {
  const events = join(tempDir(), "events");
  const h = start(t, { EVENTS_FILE: events });
  await h.initialize();
  assert.deepEqual((await h.call("shutdown", {})).result, {});
  const late = await h.call("tool/call", { name: "echo", args: { text: "x" } });
  assert.equal(late.error.code, -32600);
  h.notify("exit");
  assert.equal(await h.exited, 0);
  assert.equal(readFileSync(events, "utf8"), "initialized\nserved\n");
});

test("end of input ends serve() too", async (t) => {
  const events = join(tempDir(), "events");
  const h = start(t, { EVENTS_FILE: events });
  await h.initialize();
  h.proc.stdin.end();
  assert.equal(await h.exited, 0);
  assert.equal(readFileSync(events, "utf8"), "initialized\nserved\n");
});

test("tool results: a string, a full result, a thrown Error is is_error, a YepError is a protocol error, an unknown tool -32602", async (t) => {
  const h = start(t);
  await h.initialize();
  assert.deepEqual((await h.call("tool/call", { tool_call_id: "c1", name: "echo", args: { text: "hi" } })).result, { output: "hi" });
  assert.deepEqual((await h.call("tool/call", { name: "result" })).result, { output: "with data", data: { n: 1 } });
  assert.deepEqual((await h.call("tool/call", { name: "fail" })).result, { output: "it broke", is_error: true });
  const pf = await h.call("tool/call", { name: "protocol_fail" });
  assert.deepEqual(pf.error, { code: -32003, message: "not permitted here", data: { why: "test" } });
  const unknown = await h.call("tool/call", { name: "nope" });
  assert.equal(unknown.error.code, -32602);
  assert.match(unknown.error.message, /has no tool "nope" \(it serves: echo, fail/);
  await h.close();
});

test("a streaming tool's tool/update carries request_id and tool_call_id and comes before the result", async (t) => {
  const h = start(t);
  await h.initialize();
  const id = h.request("tool/call", { tool_call_id: "call-9", name: "count", args: { n: 2 } });
  const res = await h.next((m) => m.id === id);
  assert.deepEqual(res.result, { output: "counted to 2" });
  const updates = h.received.filter((m) => m.method === "tool/update");
  assert.deepEqual(
    updates.map((u) => u.params),
    [
      { request_id: id, tool_call_id: "call-9", progress: { current: 1, total: 2, message: "at 1" } },
      { request_id: id, tool_call_id: "call-9", progress: { current: 2, total: 2, message: "at 2" } },
      { request_id: id, tool_call_id: "call-9", output: "done" },
    ],
  );
  const order = h.transcript.filter((l) => l.startsWith("←")).slice(1);
  assert.match(order.at(-1), /"id":2,"result"/);
  // A string request id is echoed as it came.
  h.send({ jsonrpc: "2.0", id: "str-1", method: "tool/call", params: { name: "count", args: { n: 1 } } });
  const u = await h.next((m) => m.method === "tool/update" && m.params.request_id === "str-1");
  assert.equal(u.params.progress.current, 1);
  assert.deepEqual((await h.next((m) => m.id === "str-1")).result, { output: "counted to 1" });
  await h.close();
});

test("tool/update is refused when the tool is not streaming, and not sent when the host did not advertise streaming", async (t) => {
  const h = start(t);
  await h.initialize(["tools"]);
  assert.deepEqual((await h.call("tool/call", { name: "nostream" })).result, { output: "not_declared" });
  // A host that shows no progress: update() sends nothing and the tool carries on.
  const res = await h.call("tool/call", { name: "count", args: { n: 1 } });
  assert.deepEqual(res.result, { output: "counted to 1" });
  assert.equal(h.received.filter((m) => m.method === "tool/update").length, 0);
  await h.close();
});

test("cancel aborts the call's signal: the cancel is answered cancelled:true, then the call -32800", async (t) => {
  const h = start(t);
  await h.initialize();
  const id = h.request("tool/call", { tool_call_id: "c", name: "wait" });
  await h.next((m) => m.method === "tool/update" && m.params.request_id === id);
  const cid = h.request("cancel", { id });
  const cancelRes = await h.next((m) => m.id === cid);
  assert.deepEqual(cancelRes.result, { cancelled: true });
  const res = await h.next((m) => m.id === id);
  assert.deepEqual(res.error, { code: -32800, message: "cancelled" });
  const lines = h.transcript.filter((l) => l.startsWith("←"));
  assert.ok(lines.findIndex((l) => l.includes(`"id":${cid},`)) < lines.findIndex((l) => l.includes(`"id":${id},"error"`)));
  // A cancel for nothing in flight says so.
  assert.deepEqual((await h.call("cancel", { id: 999 })).result, { cancelled: false });
  await h.close();
});

test("many calls in flight at once: each answers when released, in any order", async (t) => {
  const h = start(t);
  await h.initialize();
  const n = 20;
  const ids = [];
  for (let i = 0; i < n; i++) ids.push(h.request("tool/call", { name: "gate", args: { name: `g${i}` } }));
  // Release in reverse: a gate answers only once released, so all were running together.
  for (let i = n - 1; i >= 0; i--) {
    const r = await h.call("tool/call", { name: "release", args: { name: `g${i}` } });
    assert.deepEqual(r.result, { output: "ok" }, `release g${i}`);
    const g = await h.next((m) => m.id === ids[i]);
    assert.deepEqual(g.result, { output: `released g${i}` });
  }
  await h.close();
});

test("hooks: glob matching, block, mutate feeding the next subscription, allow by default, a failing hook is an error", async (t) => {
  const h = start(t);
  await h.initialize();
  const fire = (toolName, args, extra = {}) => h.call("hook/fire", { event: "pre_tool_use", toolName, payload: { tool_call_id: "c", args }, ...extra });
  assert.deepEqual((await fire("rm", { path: "/" })).result, { decision: "block", reason: "not the root" });
  assert.deepEqual((await fire("rmdir", { path: "~" })).result, { decision: "mutate", reason: "expanded", args: { path: "/home" } });
  assert.deepEqual((await fire("rm", { path: "/tmp" })).result, { decision: "allow" });
  assert.deepEqual((await fire("ls", { path: "/" })).result, { decision: "allow" });
  // The matcher the host names picks that subscription alone.
  assert.deepEqual((await fire("rm", { path: "/" }, { matcher: "*" })).result, { decision: "allow" });
  const broke = await fire("explode", {});
  assert.equal(broke.error.code, 0);
  assert.match(broke.error.message, /hook pre_tool_use "\*" failed on tool "explode": hook broke/);
  const post = await h.call("hook/fire", { event: "post_tool_use", toolName: "echo", payload: { result: { output: "hi" } } });
  assert.deepEqual(post.result, { decision: "mutate", result: { output: "hi!" } });
  await h.close();
});

test("prompt/contribution, command/execute with and without the extension prefix, config/changed", async (t) => {
  const h = start(t);
  await h.initialize();
  assert.deepEqual((await h.call("prompt/contribution", { session_id: "s", turn: 4 })).result, { text: "turn 4" });
  assert.deepEqual((await h.call("command/execute", { name: "full:greet", arguments: "Ada" })).result, { success: true, message: "hello, Ada" });
  assert.deepEqual((await h.call("command/execute", { name: "greet" })).result, { success: true, message: "hello, world" });
  assert.deepEqual((await h.call("command/execute", { name: "fail" })).result, { success: false, message: "no luck" });
  assert.equal((await h.call("command/execute", { name: "nope" })).error.code, -32602);
  assert.deepEqual((await h.call("config/changed", { config: { restart: false } })).result, { status: "ok" });
  assert.deepEqual((await h.call("config/changed", { config: { restart: true } })).result, { status: "restart-required" });
  await h.close();
});

test("onConfig refusing the config fails initialize with -32602", async (t) => {
  const h = start(t);
  const res = await h.call("initialize", { protocol_version: "1.0", config: { reject: true } });
  assert.equal(res.error.code, -32602);
  assert.match(res.error.message, /config rejected: reject is set/);
});

test("initialized, trace/event and workspace/changed reach their callbacks in arrival order, before serve() returns", async (t) => {
  const events = join(tempDir(), "events");
  const h = start(t, { EVENTS_FILE: events });
  await h.initialize();
  h.notify("trace/event", { type: "slow", session_id: "s1" });
  h.notify("workspace/changed", { workspace_root: "/other" });
  h.notify("trace/event", { type: "turn.completed", session_id: "s1", turn_id: "1" });
  await h.close();
  assert.equal(readFileSync(events, "utf8"), "initialized\ntrace slow\nworkspace /other\ntrace turn.completed\nserved\n");
});

test("status/changed is sent when declared and advertised, not sent otherwise", async (t) => {
  const h = start(t);
  await h.initialize();
  assert.deepEqual((await h.call("tool/call", { name: "status", args: { text: "busy" } })).result, { output: "set" });
  const st = h.received.find((m) => m.method === "status/changed");
  assert.deepEqual(st, { jsonrpc: "2.0", method: "status/changed", params: { text: "busy" } });
  await h.close();

  const h2 = start(t);
  await h2.initialize(["tools"]);
  assert.deepEqual((await h2.call("tool/call", { name: "status", args: { text: "busy" } })).result, { output: "not sent" });
  assert.equal(h2.received.filter((m) => m.method === "status/changed").length, 0);
  await h2.close();
});

test("ui/ask: the host's answer, a dismissal, a call cancelled while asking sends cancel, and a host without ui_ask", async (t) => {
  const h = start(t);
  await h.initialize();
  let id = h.request("tool/call", { name: "ask" });
  let q = await h.next((m) => m.method === "ui/ask");
  assert.deepEqual(q.params, { prompt: "Name?", options: ["a", "b"] });
  h.send({ jsonrpc: "2.0", id: q.id, result: { answer: "b", extra: 1 } });
  assert.deepEqual((await h.next((m) => m.id === id && !m.method)).result, { output: "answer b" });

  id = h.request("tool/call", { name: "ask" });
  q = await h.next((m) => m.method === "ui/ask");
  h.send({ jsonrpc: "2.0", id: q.id, result: { answer: "", cancelled: true } });
  assert.deepEqual((await h.next((m) => m.id === id && !m.method)).result, { output: "dismissed" });

  id = h.request("tool/call", { name: "ask" });
  q = await h.next((m) => m.method === "ui/ask");
  const cid = h.request("cancel", { id });
  assert.deepEqual((await h.next((m) => m.id === cid && !m.method)).result, { cancelled: true });
  const c = await h.next((m) => m.method === "cancel");
  assert.deepEqual(c.params, { id: q.id });
  h.send({ jsonrpc: "2.0", id: c.id, result: { cancelled: true } });
  h.send({ jsonrpc: "2.0", id: q.id, error: { code: -32800, message: "cancelled" } });
  assert.deepEqual((await h.next((m) => m.id === id && !m.method)).error, { code: -32800, message: "cancelled" });
  await h.close();

  const h2 = start(t);
  await h2.initialize(["tools"]);
  assert.deepEqual((await h2.call("tool/call", { name: "ask" })).result, { output: "not_advertised" });
  await h2.close();
});

test("log goes to the host when declared and advertised, to stderr otherwise", async (t) => {
  const h = start(t);
  await h.initialize();
  await h.call("tool/call", { name: "log" });
  const log = h.received.find((m) => m.method === "log");
  assert.deepEqual(log.params, { level: "warn", message: "careful", fields: { tool: "log", err: "boom" } });
  await h.close();

  const h2 = start(t);
  await h2.initialize(["tools"]);
  await h2.call("tool/call", { name: "log" });
  await h2.close();
  assert.equal(h2.received.filter((m) => m.method === "log").length, 0);
  assert.match(h2.stderr, /\[WARN\] full: careful \{"tool":"log","err":"boom"\}/);
});

test("a line that is not JSON or not an object is skipped and the server carries on", async (t) => {
  const h = start(t, {}, { record: false });
  await h.initialize();
  h.sendLine("this is not json");
  h.sendLine("[1,2]");
  const res = await h.call("tool/call", { name: "echo", args: { text: "still here" } });
  assert.deepEqual(res.result, { output: "still here" });
  await h.close();
});

test("a message over the size limit is answered -32001 when it is a request, and the server carries on", async (t) => {
  const h = start(t, { MAX_MESSAGE_BYTES: "4096" });
  await h.initialize();
  const id = h.request("tool/call", { name: "echo", args: { text: "x".repeat(8192) } });
  const res = await h.next((m) => m.id === id);
  assert.deepEqual(res.error, { code: -32001, message: "message exceeds 4096 bytes" });
  assert.deepEqual((await h.call("tool/call", { name: "echo", args: { text: "small" } })).result, { output: "small" });
  await h.close();
});

test("validate-wire is not vacuous: a server line that breaks the schema fails it", () => {
  const bad = join(tempDir(), "bad.txtar");
  writeFileSync(
    bad,
    [
      '→ {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.0"}}',
      '← {"jsonrpc":"2.0","id":1,"result":{"protocol_version":"1.0"}}',
      '→ {"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"echo"}}',
      '← {"jsonrpc":"2.0","method":"tool/update","params":{"tool_call_id":"no request_id"}}',
      '← {"jsonrpc":"2.0","id":2,"result":{"output":7}}',
      "",
    ].join("\n"),
  );
  assert.throws(() => execFileSync(yolop(), ["ext", "validate-wire", bad], { encoding: "utf8", stdio: "pipe" }), (e) => {
    assert.equal(e.status, 1);
    assert.match(e.stdout + e.stderr, /request_id/);
    assert.match(e.stdout + e.stderr, /output/);
    return true;
  });
});

test("every message of every dialogue above validates against schema.json (yolop ext validate-wire)", () => {
  assert.ok(recorded >= 15, `recorded ${recorded} dialogues`);
  try {
    execFileSync(yolop(), ["ext", "validate-wire", transcripts], { encoding: "utf8" });
  } catch (e) {
    assert.fail(`yolop ext validate-wire ${transcripts}:\n${e.stdout}${e.stderr}`);
  }
});
