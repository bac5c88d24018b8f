// The SDK served over in-process streams (serve({input, output})), where
// the test decides exactly how the bytes are cut into chunks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { once } from "node:events";
import { Server } from "../src/index.js";

/** A server on two PassThrough streams, and a reader of its lines. */
function serve(setup) {
  const s = new Server({ name: "inproc", version: "0.0.1" });
  setup(s);
  const input = new PassThrough();
  const output = new PassThrough();
  const served = s.serve({ input, output });
  /** @type {any[]} */
  const lines = [];
  let buf = "";
  output.setEncoding("utf8");
  output.on("data", (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      lines.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
  });
  const next = async () => {
    while (lines.length === 0) await once(output, "data");
    return lines.shift();
  };
  return { input, next, served };
}

test("a line cut in pieces anywhere, even inside a multi-byte character, arrives whole", async () => {
  const { input, next, served } = serve((s) => s.tool("echo", (call) => call.args.text));
  const line = Buffer.from(
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocol_version: "1.0" } }) +
      "\n" +
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tool/call", params: { name: "echo", args: { text: "héllo ✓" } } }) +
      "\n",
  );
  // One byte a chunk: every character of more than one byte is split.
  for (let i = 0; i < line.length; i++) input.write(line.subarray(i, i + 1));
  assert.equal((await next()).id, 1);
  assert.deepEqual(await next(), { jsonrpc: "2.0", id: 2, result: { output: "héllo ✓" } });
  input.end();
  await served;
});

test("the rest of an oversized line is skipped, not read as a message of its own", async () => {
  const s = new Server({ name: "inproc" });
  s.tool("echo", (call) => call.args.text);
  const input = new PassThrough();
  const output = new PassThrough();
  const served = s.serve({ input, output, maxMessageBytes: 200 });
  /** @type {any[]} */
  const got = [];
  let buf = "";
  output.setEncoding("utf8");
  output.on("data", (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      got.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
  });
  input.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }) + "\n");
  // An oversized request, cut off while it is still arriving...
  input.write(`{"jsonrpc":"2.0","id":2,"method":"tool/call","params":{"name":"echo","args":{"text":"${"x".repeat(300)}`);
  // The rest of that line, which happens to be a whole request (id 5), then a line of its own (id 3).
  input.write(`{"jsonrpc":"2.0","id":5,"method":"tool/call","params":{"name":"echo","args":{"text":"sneaky"}}}\n`);
  input.write(`{"jsonrpc":"2.0","id":3,"method":"tool/call","params":{"name":"echo","args":{"text":"tail"}}}` + "\n");
  input.write(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tool/call", params: { name: "echo", args: { text: "ok" } } }) + "\n");
  while (!got.some((m) => m.id === 4)) await once(output, "data");
  input.end();
  await served;
  assert.deepEqual(got.map((m) => m.id).sort(), [1, 2, 3, 4]);
  const byId = (id) => got.find((m) => m.id === id);
  assert.deepEqual(byId(2).error, { code: -32001, message: "message exceeds 200 bytes" });
  assert.deepEqual(byId(3).result, { output: "tail" }); // the line after the oversized one is read whole
  assert.deepEqual(byId(4).result, { output: "ok" });
});
