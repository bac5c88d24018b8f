// Conformance through the real yolop binary: the dialogue goldens replay
// against servers on this SDK, the example passes `yolop ext doctor`, and
// the goldens' server lines validate against schema.json.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { fixture, repoDir, sdkDir, tempDir, yolop } from "./helpers.mjs";

const run = promisify(execFile);
const dialogues = join(repoDir, "schema", "yep", "v1", "dialogues");

/** What each golden's manifest declares: what the Go server of harness/record/golden_test.go was granted. */
const facets = {
  lifecycle: {},
  tool_call: {
    tools: [
      { name: "count", description: "Count to 3.", streaming: true },
      { name: "wait", description: "Wait until cancelled.", streaming: true },
    ],
  },
  hook: {
    tools: [{ name: "rm", description: "Remove a path." }],
    hooks: [{ event: "pre_tool_use", matcher: "rm", timeout_ms: 60000, on_error: "block" }],
  },
  ui_ask: { ui_ask: true, tools: [{ name: "greet", description: "Greet the user." }] },
  config_changed: {
    config_schema: { type: "object", properties: { level: { type: "string" } } },
  },
  trace_event: { trace: true },
};

/** A package dir named "golden" whose server is the fixture in the scenario. */
function goldenPackage(scenario) {
  const dir = join(tempDir(), "golden");
  mkdirSync(dir);
  const manifest = {
    name: "golden",
    version: "1.0.0",
    yolop: {
      protocol_version: "1.0",
      capabilityServer: { command: "node", args: [fixture, scenario] },
      // The fixture and the SDK it imports live in the repository.
      sandbox: { fs: [{ path: repoDir }] },
      ...facets[scenario],
    },
  };
  writeFileSync(join(dir, "plugin.json"), JSON.stringify(manifest, null, 2));
  return dir;
}

test("the goldens are the six this test knows", () => {
  const names = readdirSync(dialogues).filter((f) => f.endsWith(".txtar")).map((f) => f.replace(/\.txtar$/, "")).sort();
  assert.deepEqual(names, Object.keys(facets).sort());
});

for (const scenario of Object.keys(facets)) {
  test(`yolop ext replay ${scenario}.txtar matches a server on the SDK`, async () => {
    const dir = goldenPackage(scenario);
    const golden = join(dialogues, `${scenario}.txtar`);
    try {
      const { stdout } = await run(yolop(), ["ext", "replay", golden, dir], { env: { ...process.env, HOME: tempDir() } });
      assert.match(stdout, /matches/);
    } catch (e) {
      assert.fail(`yolop ext replay ${golden} ${dir}:\n${e.stdout}${e.stderr}`);
    }
  });
}

test("replay is not vacuous: a golden played against a server that answers otherwise diverges", async () => {
  const dir = goldenPackage("lifecycle");
  const golden = join(dialogues, "tool_call.txtar"); // the lifecycle server has no tools
  await assert.rejects(run(yolop(), ["ext", "replay", golden, dir], { env: { ...process.env, HOME: tempDir() } }), (e) => {
    assert.equal(e.code, 1);
    assert.match(e.stdout, /tool_call\.txtar:/);
    return true;
  });
});

test("yolop ext doctor passes examples/echo with no failures", async () => {
  const dir = join(sdkDir, "examples", "echo");
  try {
    const { stdout } = await run(yolop(), ["ext", "doctor", dir], { env: { ...process.env, HOME: tempDir() } });
    assert.match(stdout, /OK: \d+ passed, \d+ warnings, 0 failed/);
    // Every facet the example declares was exercised.
    for (const check of ["prompt     dynamic", "tool count", "command greet", "config/changed", "ui/ask", "status/changed", "cancel honoured", "hook pre_tool_use"]) {
      assert.match(stdout, new RegExp(`PASS .*${check.replace(/[/.*]/g, "\\$&")}`), check);
    }
  } catch (e) {
    assert.fail(`yolop ext doctor ${dir}:\n${e.stdout}${e.stderr}`);
  }
});
