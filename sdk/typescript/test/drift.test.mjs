// The drift guards: the SDK's generated vocabulary and its dispatch table
// against schema/yep/v1/meta.json, and the generator's --check.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import * as sdk from "../src/index.js";
import { Host, fixture, repoDir, sdkDir, tempDir } from "./helpers.mjs";

const meta = JSON.parse(readFileSync(join(repoDir, "schema", "yep", "v1", "meta.json"), "utf8"));

test("handled methods ⊇ the methods meta.json gives the server (host_to_server and both)", () => {
  const want = meta.methods.filter((m) => m.direction === "host_to_server" || m.direction === "both").map((m) => m.name);
  const missing = want.filter((m) => !sdk.HANDLED_METHODS.includes(m));
  assert.deepEqual(missing, [], `methods the SDK does not handle: ${missing.join(", ")}`);
  // And it handles nothing the protocol does not define.
  assert.deepEqual(sdk.HANDLED_METHODS.filter((m) => !meta.methods.some((x) => x.name === m)), []);
});

test("each handled request is served live: none answers -32601", async (t) => {
  const h = new Host([fixture, "full"]);
  t.after(() => h.proc.kill());
  await h.initialize();
  const requests = meta.methods.filter((m) => m.direction !== "server_to_host" && m.kind === "request" && !["initialize", "shutdown"].includes(m.name));
  for (const m of requests) {
    const res = await h.call(m.name, m.name === "cancel" ? { id: 999 } : m.name === "tool/call" ? { name: "echo", args: { text: "x" } } : m.name === "command/execute" ? { name: "greet" } : m.name === "hook/fire" ? { event: "pre_tool_use", toolName: "x" } : {});
    assert.notEqual(res.error?.code, -32601, `${m.name}: ${JSON.stringify(res)}`);
  }
  await h.close();
});

test("advertised capabilities ⊆ meta.json's tokens, in its order, for a server with every facet", () => {
  const s = new sdk.Server({ name: "all", status: true, uiAsk: true, log: true });
  s.tool("t", () => "", { streaming: true });
  s.onHook("pre_tool_use", "*", () => {});
  s.prompt("p");
  s.dynamicPrompt(() => "");
  s.command("c", "", () => {});
  s.mcpServer({ name: "m", type: "stdio", command: "x" });
  s.onConfigChanged(() => false);
  s.onTrace(() => {});
  const { capabilities, capability_params } = s.capabilities();
  const extra = capabilities.filter((c) => !meta.capabilities.includes(c));
  assert.deepEqual(extra, []);
  assert.deepEqual(capabilities, meta.capabilities.filter((c) => capabilities.includes(c)), "in meta.json's order");
  // Every facet a server can contribute is here (provider and workspace are not the SDK's to announce).
  assert.deepEqual(meta.capabilities.filter((c) => !capabilities.includes(c)), ["workspace", "provider"]);
  for (const k of Object.keys(capability_params ?? {})) assert.ok(meta.capabilities.includes(k), k);
  // A bare server announces cancel alone.
  assert.deepEqual(new sdk.Server({ name: "bare" }).capabilities(), { capabilities: ["cancel"] });
});

test("the generated vocabulary is meta.json's", () => {
  assert.equal(sdk.PROTOCOL_VERSION, meta.protocol_version);
  assert.equal(sdk.MIN_PROTOCOL_VERSION, meta.min_protocol_version);
  assert.deepEqual([...sdk.CAPABILITIES], meta.capabilities);
  assert.deepEqual([...sdk.HOOK_EVENTS], meta.hook_events);
  assert.deepEqual(sdk.METHODS.map((m) => [m.name, m.direction, m.kind, m.capability]), meta.methods.map((m) => [m.name, m.direction, m.kind, m.capability]));
  assert.deepEqual(Object.entries(sdk.ErrorCode), meta.error_codes.map((e) => [e.name, e.code]));
  assert.equal(sdk.Method.ToolCall, "tool/call");
  assert.equal(sdk.Capability.UiAsk, "ui_ask");
  assert.deepEqual(sdk.ENUMS, meta.enums);
});

test("the version and vocabularies are not typed by hand in the SDK's runtime", () => {
  // The code of index.js, without its comments.
  const src = readFileSync(join(sdkDir, "src", "index.js"), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
  assert.doesNotMatch(src, new RegExp(`["']${meta.protocol_version.replace(".", "\\.")}["']`), "index.js spells the protocol version");
  for (const m of meta.methods) {
    assert.ok(!src.includes(`"${m.name}"`), `index.js spells the method "${m.name}"; use Method from the generated metadata`);
  }
  for (const c of meta.capabilities) {
    assert.ok(!src.includes(`"${c}"`), `index.js spells the capability "${c}"; use Capability from the generated metadata`);
  }
});

test("generate.mjs --check passes on the committed output", () => {
  const r = spawnSync(process.execPath, [join(sdkDir, "gen", "generate.mjs"), "--check"], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
});

test("generate.mjs --check fails naming a stale file, and a run brings it back", () => {
  // A copy of the SDK's generator and output beside a copy of the schema, laid out as in the repository.
  const root = tempDir();
  const sdkCopy = join(root, "sdk", "typescript");
  mkdirSync(sdkCopy, { recursive: true });
  cpSync(join(sdkDir, "gen"), join(sdkCopy, "gen"), { recursive: true });
  cpSync(join(sdkDir, "src", "generated"), join(sdkCopy, "src", "generated"), { recursive: true });
  cpSync(join(repoDir, "schema", "yep", "v1"), join(root, "schema", "yep", "v1"), { recursive: true });
  const gen = join(sdkCopy, "gen", "generate.mjs");
  const check = () => spawnSync(process.execPath, [gen, "--check"], { encoding: "utf8", cwd: sdkCopy });
  assert.equal(check().status, 0, check().stderr);

  // The schema gains a capability: meta.js and meta.d.ts are stale.
  const metaFile = join(root, "schema", "yep", "v1", "meta.json");
  const m = JSON.parse(readFileSync(metaFile, "utf8"));
  m.capabilities.push("teleport");
  writeFileSync(metaFile, JSON.stringify(m, null, 2));
  let r = check();
  assert.equal(r.status, 1);
  assert.match(r.stderr, /src\/generated\/meta\.js/);
  assert.match(r.stderr, /src\/generated\/meta\.d\.ts/);
  assert.doesNotMatch(r.stderr, /types\.d\.ts/);

  // A hand edit of a generated file is stale too.
  appendFileSync(join(sdkCopy, "src", "generated", "types.d.ts"), "// edited\n");
  execFileSync(process.execPath, [gen], { cwd: sdkCopy });
  r = check();
  assert.equal(r.status, 0, r.stderr);
  assert.match(readFileSync(join(sdkCopy, "src", "generated", "meta.js"), "utf8"), /"teleport"/);
  assert.match(readFileSync(join(sdkCopy, "src", "generated", "meta.js"), "utf8"), /^\/\/ Code generated .* DO NOT EDIT\./);
});

test("generate.mjs --unstable targets the unstable schema: the staged field appears, and --check refuses the output", () => {
  const root = tempDir();
  const sdkCopy = join(root, "sdk", "typescript");
  mkdirSync(sdkCopy, { recursive: true });
  cpSync(join(sdkDir, "gen"), join(sdkCopy, "gen"), { recursive: true });
  cpSync(join(sdkDir, "src", "generated"), join(sdkCopy, "src", "generated"), { recursive: true });
  cpSync(join(repoDir, "schema", "yep", "v1"), join(root, "schema", "yep", "v1"), { recursive: true });
  const gen = join(sdkCopy, "gen", "generate.mjs");
  const types = () => readFileSync(join(sdkCopy, "src", "generated", "types.d.ts"), "utf8");
  // status/changed's degraded is staged (core/yep/unstable.go): only the unstable schema has it.
  const staged = /interface StatusChangedParams \{[^}]*\bdegraded\?:/;
  assert.doesNotMatch(types(), staged);

  execFileSync(process.execPath, [gen, "--unstable"], { cwd: sdkCopy });
  assert.match(types(), staged);
  assert.match(types(), /from schema\/yep\/v1\/unstable; DO NOT EDIT\.\n\/\/ UNSTABLE: /);
  const r = spawnSync(process.execPath, [gen, "--check"], { encoding: "utf8", cwd: sdkCopy });
  assert.equal(r.status, 1, "the stable --check must refuse unstable output");
  assert.match(r.stderr, /types\.d\.ts/);
  assert.equal(spawnSync(process.execPath, [gen, "--check", "--unstable"], { cwd: sdkCopy }).status, 0);

  execFileSync(process.execPath, [gen], { cwd: sdkCopy });
  assert.doesNotMatch(types(), staged);
  assert.equal(spawnSync(process.execPath, [gen, "--check"], { cwd: sdkCopy }).status, 0);
});
