// Test helpers: a host side that drives a server on the SDK over real
// pipes and records the dialogue, and the yolop binary.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "..");
export const repoDir = join(sdkDir, "..", "..");
export const fixture = join(sdkDir, "test", "fixtures", "server.mjs");

let built = "";
/**
 * The yolop binary: $YOLOP_BIN when set, else built once per test process
 * from the repository root.
 */
export function yolop() {
  if (process.env.YOLOP_BIN) return process.env.YOLOP_BIN;
  if (!built) {
    const out = join(mkdtempSync(join(tmpdir(), "yolop-sdk-ts-")), "yolop");
    execFileSync("go", ["build", "-o", out, "./cmd/yolop"], { cwd: repoDir, stdio: ["ignore", "inherit", "inherit"] });
    built = out;
  }
  return built;
}

/**
 * A Host runs a server subprocess and talks YEP to it, recording every line
 * both ways ("→ " host to server, "← " server to host).
 */
export class Host {
  /**
   * @param {string[]} args node arguments (script and its arguments)
   * @param {{env?: Record<string, string>}} [opts]
   */
  constructor(args, opts = {}) {
    this.proc = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...opts.env } });
    /** @type {string[]} */
    this.transcript = [];
    /** @type {any[]} */
    this.received = [];
    /** @type {Array<{pred: (m: any) => boolean, resolve: (m: any) => void}>} */
    this.waiters = [];
    this.stderr = "";
    this.nextId = 1;
    let buf = "";
    this.proc.stdout.setEncoding("utf8");
    this.proc.stdout.on("data", (chunk) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        this.transcript.push("← " + line);
        const msg = JSON.parse(line); // the server writes only JSON lines
        this.received.push(msg);
        this._wake();
      }
    });
    this.proc.stderr.setEncoding("utf8");
    this.proc.stderr.on("data", (c) => {
      this.stderr += c;
      this._wake();
    });
    this.exited = new Promise((resolve) => this.proc.on("exit", (code) => resolve(code)));
  }

  _wake() {
    for (const w of [...this.waiters]) {
      const i = this.received.findIndex(w.pred);
      if (i >= 0) {
        const [m] = this.received.splice(i, 1);
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  }

  /** Sends a raw line. @param {string} line */
  sendLine(line) {
    this.transcript.push("→ " + line);
    this.proc.stdin.write(line + "\n");
  }

  /** @param {any} msg */
  send(msg) {
    this.sendLine(JSON.stringify(msg));
  }

  /**
   * Waits for (and takes) the first received message matching pred.
   * @param {(m: any) => boolean} pred
   * @returns {Promise<any>}
   */
  next(pred) {
    return new Promise((resolve) => {
      this.waiters.push({ pred, resolve });
      this._wake();
    });
  }

  /** Sends a request and returns its id. @param {string} method @param {any} [params] */
  request(method, params) {
    const id = this.nextId++;
    this.send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
    return id;
  }

  /** Sends a request and waits for its response. @param {string} method @param {any} [params] */
  async call(method, params) {
    const id = this.request(method, params);
    return this.next((m) => m.id === id && !("method" in m));
  }

  /** @param {string} method @param {any} [params] */
  notify(method, params) {
    this.send({ jsonrpc: "2.0", method, params: params ?? {} });
  }

  /** The handshake with the given host capabilities. */
  async initialize(capabilities = ["tools", "streaming", "hooks", "prompt", "dynamic_prompt", "commands", "cancel", "log", "config", "workspace", "status", "ui_ask", "trace"], extra = {}) {
    const res = await this.call("initialize", { protocol_version: "1.0", session_id: "s1", workspace_root: "/ws", capabilities, ...extra });
    this.notify("initialized");
    return res;
  }

  /** shutdown, exit, and the exit code. */
  async close() {
    const res = await this.call("shutdown", {});
    this.notify("exit");
    this.proc.stdin.end();
    const code = await this.exited;
    return { res, code };
  }

  /** Appends this dialogue to a validate-wire transcript file. @param {string} file @param {string} name */
  record(file, name) {
    writeFileSync(file, `-- ${name} --\n${this.transcript.join("\n")}\n`, { flag: "a" });
  }
}

/** A fresh temporary directory. */
export function tempDir() {
  return mkdtempSync(join(tmpdir(), "yolop-sdk-ts-"));
}

export { existsSync };
