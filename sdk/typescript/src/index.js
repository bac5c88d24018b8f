// @ts-check
/**
 * The yolop SDK for TypeScript and JavaScript: a YEP capability server
 * built from handlers, served over stdio (JSON-RPC 2.0, one JSON object
 * per line). It mirrors the Go SDK (yolop.dev/core/sdk) message for
 * message, so a server written on it answers a host exactly as a Go one
 * does. Zero runtime dependencies; Node.js >= 20.
 *
 *   import { Server } from "./lib/yolop-sdk/src/index.js";
 *   const s = new Server({ name: "hello", version: "0.1.0" });
 *   s.tool("hello", async (call) => `hello, ${call.args.name ?? "world"}`);
 *   await s.serve();
 *
 * Forward compatibility: unknown fields of a message are ignored, missing
 * ones default, and capabilities are matched by token, so a newer host
 * (same protocol major) works with this SDK unchanged.
 *
 * @module
 */

import {
  PROTOCOL_VERSION,
  MIN_PROTOCOL_VERSION,
  DEFAULT_MAX_MESSAGE_BYTES,
  CAPABILITIES,
  Capability,
  ENUMS,
  ErrorCode,
  Method,
} from "./generated/meta.js";

import { StringDecoder } from "node:string_decoder";

export * from "./generated/meta.js";

/**
 * A YepError fails a request at the protocol level: thrown from a handler,
 * it becomes the response's error object as it is ({code, message, data,
 * retryable}). A plain Error thrown from a tool or command handler is a
 * tool-level failure instead, which the agent or user reads.
 */
export class YepError extends Error {
  /**
   * @param {number} code a JSON-RPC error code; see ErrorCode
   * @param {string} message what went wrong, for people
   * @param {{data?: unknown, retryable?: boolean}} [opts]
   */
  constructor(code, message, opts = {}) {
    super(message);
    this.name = "YepError";
    this.code = code;
    this.data = opts.data;
    this.retryable = opts.retryable ?? false;
  }

  /** The wire error object, members in the Go SDK's order. */
  toJSON() {
    /** @type {Record<string, unknown>} */
    const o = { code: this.code, message: this.message };
    if (this.retryable) o.retryable = true;
    if (this.data !== undefined) o.data = this.data;
    return o;
  }
}

/** The error a cancelled request is answered with (-32800). */
export const CANCELLED = Object.freeze(new YepError(ErrorCode.cancelled, "cancelled"));

/**
 * An SDKError reports a host-facing call that sent nothing; its code says
 * why: "not_declared" (the server did not opt into the method), "not_advertised"
 * (the host did not advertise it) or "not_initialized" (no handshake yet).
 */
export class SDKError extends Error {
  /**
   * @param {"not_declared"|"not_advertised"|"not_initialized"} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = "SDKError";
    this.code = code;
  }
}

/**
 * The methods this SDK's dispatch serves, host to server: requests and
 * notifications ("cancel" is answered by the connection itself). The
 * drift-guard test checks it covers every host_to_server and both method
 * of the schema's metadata.
 */
export const HANDLED_METHODS = Object.freeze([
  Method.Initialize,
  Method.Initialized,
  Method.ToolCall,
  Method.Cancel,
  Method.PromptContribution,
  Method.HookFire,
  Method.TraceEvent,
  Method.ConfigChanged,
  Method.WorkspaceChanged,
  Method.CommandExecute,
  Method.Shutdown,
  Method.Exit,
]);

/** @type {readonly string[]} */
const LEVELS = ENUMS["LogParams.level"];

/**
 * @param {string} s
 * @returns {{major: number, minor: number} | null}
 */
function parseVersion(s) {
  const m = /^(\d{1,9})(?:\.(\d{1,9}))?$/.exec(String(s).trim());
  return m ? { major: Number(m[1]), minor: Number(m[2] ?? "0") } : null;
}

/**
 * A glob match with Go's path.Match syntax (*, ?, [...], \\ escapes); a
 * "*" never matches "/".
 * @param {string} pattern
 * @param {string} name
 */
export function globMatch(pattern, name) {
  return globRegExp(pattern).test(name);
}

/** @param {string} pattern */
function globRegExp(pattern) {
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "\\") {
      i++;
      if (i >= pattern.length) throw new Error(`malformed glob ${JSON.stringify(pattern)}: trailing backslash`);
      re += pattern[i].replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
    } else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end < 0) throw new Error(`malformed glob ${JSON.stringify(pattern)}: unclosed [`);
      let cls = pattern.slice(i + 1, end);
      if (cls.startsWith("^")) cls = "^" + cls.slice(1);
      re += `[${cls.replace(/\\/g, "\\\\").replace(/]/g, "\\]")}]`;
      i = end;
    } else re += c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  }
  return new RegExp(re + "$", "s");
}

/**
 * @typedef {import("./generated/types.js").ToolResult} ToolResult
 * @typedef {import("./generated/types.js").HookFireResult} HookFireResult
 * @typedef {import("./generated/types.js").InitializeParams} InitializeParams
 * @typedef {import("./generated/types.js").InitializeResult} InitializeResult
 * @typedef {import("./generated/types.js").UIAskParams} UIAskParams
 * @typedef {import("./generated/types.js").UIAskResult} UIAskResult
 * @typedef {import("./generated/types.js").TraceEventParams} TraceEventParams
 * @typedef {import("./generated/types.js").CommandExecuteResult} CommandExecuteResult
 * @typedef {import("./generated/types.js").PromptContributionParams} PromptContributionParams
 * @typedef {import("./generated/types.js").MCPServerDecl} MCPServerDecl
 * @typedef {import("./generated/types.js").ID} ID
 */

/**
 * A Server is a capability server built from handlers. Register every
 * handler, then call serve(); registering after serving started throws.
 * One Server serves one connection.
 */
export class Server {
  /**
   * @param {import("./index.d.ts").ServerInfo} info
   */
  constructor(info) {
    /** @readonly */
    this.info = { name: info.name ?? "", version: info.version ?? "", status: !!info.status, uiAsk: !!info.uiAsk, log: !!info.log };
    /** @type {Map<string, {name: string, streaming: boolean, handler: Function}>} */
    this._tools = new Map();
    /** @type {Array<{event: string, matcher: string, re: RegExp, timeoutMs: number, onError: string, handler: Function}>} */
    this._hooks = [];
    this._hasPrompt = false;
    this._staticPrompt = "";
    /** @type {Function | null} */
    this._dynamicPrompt = null;
    /** @type {Map<string, {name: string, description: string, handler: Function}>} */
    this._commands = new Map();
    /** @type {MCPServerDecl[]} */
    this._mcpServers = [];
    /** @type {Function | null} */
    this._onConfig = null;
    /** @type {Function | null} */
    this._onConfigChanged = null;
    /** @type {Function | null} */
    this._onTrace = null;
    /** @type {Function | null} */
    this._onWorkspace = null;
    /** @type {Function | null} */
    this._onInitialized = null;
    this._frozen = false;
    /** What the handshake settled: the params and the capabilities the host advertised. @type {{params: InitializeParams, host: Set<string>} | null} */
    this._session = null;
    this._shutdown = false;
    /** @type {((line: string) => void) | null} */
    this._write = null;
    /** @type {Map<string, AbortController>} */
    this._incoming = new Map();
    /** @type {Map<number, {resolve: (v: any) => void, reject: (e: any) => void}>} */
    this._pending = new Map();
    this._nextId = 1;
    /** @type {Promise<void>} */
    this._events = Promise.resolve();
    this._closed = false;
    this._initializing = false;
    /** @type {(() => void) | null} */
    this._finish = null;
  }

  /** @param {string} what */
  _register(what) {
    if (this._frozen) throw new Error(`sdk: ${what} called after serve() started; register every handler before serving`);
  }

  /**
   * Registers a tool. The server announces "tools" (and "streaming" for a
   * streaming tool) and lists the name in capability_params.tools.
   * @param {string} name
   * @param {import("./index.d.ts").ToolHandler} handler
   * @param {import("./index.d.ts").ToolOptions} [opts]
   */
  tool(name, handler, opts = {}) {
    this._register(`tool(${JSON.stringify(name)})`);
    if (!name || typeof handler !== "function") throw new Error("sdk: tool needs a name and a handler");
    if (this._tools.has(name)) throw new Error(`sdk: tool ${JSON.stringify(name)} is registered twice; tool names must be unique`);
    this._tools.set(name, { name, streaming: !!opts.streaming, handler });
    return this;
  }

  /**
   * Subscribes a handler to a hook event ("pre_tool_use", "post_tool_use")
   * for the tools whose name matches the glob matcher ("*" for every tool).
   * The server announces "hooks". A handler that returns nothing allows.
   * @param {string} event
   * @param {string} matcher
   * @param {import("./index.d.ts").HookHandler} handler
   * @param {import("./index.d.ts").HookOptions} [opts]
   */
  onHook(event, matcher, handler, opts = {}) {
    const what = `onHook(${JSON.stringify(event)}, ${JSON.stringify(matcher)})`;
    this._register(what);
    if (!event || !matcher || typeof handler !== "function") throw new Error('sdk: onHook needs an event, a matcher ("*" for every tool) and a handler');
    let re;
    try {
      re = globRegExp(matcher);
    } catch (e) {
      throw new Error(`sdk: ${what}: ${/** @type {Error} */ (e).message}`);
    }
    const onError = opts.onError ?? "";
    if (onError !== "" && onError !== "warn" && onError !== "block") throw new Error(`sdk: ${what}: onError is ${JSON.stringify(onError)}; want "warn" or "block"`);
    if (this._hooks.some((h) => h.event === event && h.matcher === matcher)) throw new Error(`sdk: hook ${event} ${JSON.stringify(matcher)} is registered twice`);
    this._hooks.push({ event, matcher, re, timeoutMs: opts.timeoutMs ?? 0, onError, handler });
    return this;
  }

  /**
   * Sets the static system-prompt contribution sent in the handshake. The
   * server announces "prompt".
   * @param {string} text
   */
  prompt(text) {
    this._register("prompt()");
    this._staticPrompt = text;
    this._hasPrompt = true;
    return this;
  }

  /**
   * Sets the function the host calls (prompt/contribution, at most once per
   * turn) for this turn's contribution. The server announces "prompt" and
   * "dynamic_prompt".
   * @param {import("./index.d.ts").PromptFunc} fn
   */
  dynamicPrompt(fn) {
    this._register("dynamicPrompt");
    if (typeof fn !== "function") throw new Error("sdk: dynamicPrompt needs a function");
    this._dynamicPrompt = fn;
    this._hasPrompt = true;
    return this;
  }

  /**
   * Registers a slash command, shown as "<extension>:<name>". The server
   * announces "commands".
   * @param {string} name
   * @param {string} description
   * @param {import("./index.d.ts").CommandHandler} handler
   */
  command(name, description, handler) {
    this._register(`command(${JSON.stringify(name)})`);
    if (!name || typeof handler !== "function") throw new Error("sdk: command needs a name and a handler");
    if (this._commands.has(name)) throw new Error(`sdk: command ${JSON.stringify(name)} is registered twice`);
    this._commands.set(name, { name, description: description ?? "", handler });
    return this;
  }

  /**
   * Declares an MCP server the extension provides. The server announces
   * "mcp_servers".
   * @param {MCPServerDecl} decl
   */
  mcpServer(decl) {
    this._register("mcpServer");
    if (!decl?.name) throw new Error("sdk: mcpServer needs a name");
    this._mcpServers.push(decl);
    return this;
  }

  /**
   * Sets the function called once with initialize.config (undefined when
   * the host sent none) during the handshake. Throwing refuses the config:
   * initialize fails with -32602 (or the YepError thrown).
   * @param {(config: any) => void | Promise<void>} fn
   */
  onConfig(fn) {
    this._register("onConfig");
    this._onConfig = fn;
    return this;
  }

  /**
   * Sets the handler of config/changed; it returns true when the new
   * config needs a restart ("restart-required"), false when it was applied
   * ("ok"). The server announces "config".
   * @param {(config: any, ctx: {signal: AbortSignal}) => boolean | void | Promise<boolean | void>} fn
   */
  onConfigChanged(fn) {
    this._register("onConfigChanged");
    this._onConfigChanged = fn;
    return this;
  }

  /**
   * Sets the function that receives trace/event notifications, in arrival
   * order (an async one is awaited before the next event). The server
   * announces "trace".
   * @param {(event: TraceEventParams) => void | Promise<void>} fn
   */
  onTrace(fn) {
    this._register("onTrace");
    this._onTrace = fn;
    return this;
  }

  /**
   * Sets the function called when the host repoints the workspace root
   * (workspace/changed), in order with trace events.
   * @param {(root: string) => void | Promise<void>} fn
   */
  onWorkspaceChanged(fn) {
    this._register("onWorkspaceChanged");
    this._onWorkspace = fn;
    return this;
  }

  /**
   * Sets the function called when the host sends initialized: the
   * handshake is complete and the host is listening (e.g. set the first
   * status here). It runs in order with trace and workspace callbacks.
   * @param {() => void | Promise<void>} fn
   */
  onInitialized(fn) {
    this._register("onInitialized");
    this._onInitialized = fn;
    return this;
  }

  /**
   * The capabilities and capability_params the handshake will announce,
   * from what is registered (the order of CAPABILITIES, as the Go SDK).
   * @returns {{capabilities: string[], capability_params?: Record<string, unknown>}}
   */
  capabilities() {
    /** @type {Record<string, boolean>} */
    const has = {
      [Capability.Cancel]: true,
      [Capability.DynamicPrompt]: this._dynamicPrompt !== null,
      [Capability.Trace]: this._onTrace !== null,
      [Capability.Config]: this._onConfigChanged !== null,
      [Capability.Status]: this.info.status,
      [Capability.UiAsk]: this.info.uiAsk,
      [Capability.Log]: this.info.log,
    };
    /** @type {Record<string, unknown>} */
    const params = {};
    /** @param {string} token @param {boolean} present @param {() => unknown} value */
    const contribute = (token, present, value) => {
      if (!present) return;
      has[token] = true;
      params[token] = value();
    };
    const tools = [...this._tools.values()];
    has[Capability.Streaming] = tools.some((t) => t.streaming);
    contribute(Capability.Tools, tools.length > 0, () => tools.map((t) => ({ name: t.name })));
    contribute(Capability.Hooks, this._hooks.length > 0, () =>
      this._hooks.map((h) => {
        /** @type {Record<string, unknown>} */
        const sub = { event: h.event, matcher: h.matcher };
        if (h.timeoutMs) sub.timeout_ms = h.timeoutMs;
        if (h.onError) sub.on_error = h.onError;
        return sub;
      }),
    );
    contribute(Capability.Prompt, this._hasPrompt, () => {
      /** @type {Record<string, unknown>} */
      const p = {};
      if (this._staticPrompt) p.static = this._staticPrompt;
      if (this._dynamicPrompt) p.dynamic = true;
      return p;
    });
    contribute(Capability.Commands, this._commands.size > 0, () =>
      [...this._commands.values()].map((c) => (c.description ? { name: c.name, description: c.description } : { name: c.name })),
    );
    contribute(Capability.McpServers, this._mcpServers.length > 0, () => this._mcpServers);
    const capabilities = CAPABILITIES.filter((t) => has[t]);
    const keys = Object.keys(params).sort(); // as Go encodes a map
    if (keys.length === 0) return { capabilities };
    return { capabilities, capability_params: Object.fromEntries(keys.map((k) => [k, params[k]])) };
  }

  /**
   * The initialize params the host sent, once the handshake completed;
   * before that, undefined.
   * @returns {InitializeParams | undefined}
   */
  init() {
    return this._session?.params;
  }

  /**
   * Serves one connection: over stdin and stdout by default. Resolves when
   * the host sends exit or closes the input; in-flight handlers are aborted
   * and the queued trace callbacks run before it resolves.
   * @param {import("./index.d.ts").ServeOptions} [opts]
   * @returns {Promise<void>}
   */
  serve(opts = {}) {
    if (this._frozen) return Promise.reject(new Error("sdk: this Server has already served a connection; create a new one"));
    this._frozen = true;
    const input = opts.input ?? process.stdin;
    const output = opts.output ?? process.stdout;
    const maxBytes = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this._write = (line) => {
      if (!this._closed) output.write(line + "\n");
    };
    return new Promise((resolve) => {
      let buf = "";
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        this._closed = true;
        input.off("data", onData);
        input.off("end", finish);
        input.off("close", finish);
        output.off("error", finish);
        for (const ac of this._incoming.values()) ac.abort(CANCELLED);
        for (const p of this._pending.values()) p.reject(new Error("sdk: the connection ended"));
        this._pending.clear();
        this._session = null;
        // Stop reading, so the process can exit once the handlers are done.
        const r = /** @type {any} */ (input);
        if (opts.destroyInput === false || typeof r.destroy !== "function") r.pause?.();
        else r.destroy();
        this._events.then(() => resolve());
      };
      this._finish = finish;
      const decoder = new StringDecoder("utf8"); // a character split across chunks stays whole
      let skipping = false; // inside an oversized line, until its newline
      /** @param {Buffer | string} chunk */
      const onData = (chunk) => {
        buf += typeof chunk === "string" ? chunk : decoder.write(chunk);
        let nl;
        while (!done && (nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (skipping) skipping = false;
          else this._receive(line, maxBytes);
        }
        if (!done && !skipping && Buffer.byteLength(buf) > maxBytes) {
          this._tooLarge(buf, maxBytes);
          skipping = true;
        }
        if (skipping) buf = "";
      };
      input.on("data", onData);
      input.on("end", finish);
      input.on("close", finish);
      output.on("error", finish); // the host went away (EPIPE): nothing more can be said
    });
  }

  /** @param {string} line @param {number} maxBytes */
  _tooLarge(line, maxBytes) {
    const m = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(line.slice(0, 4096));
    if (m && /"method"\s*:/.test(line.slice(0, 4096))) {
      this._send({ jsonrpc: "2.0", id: JSON.parse(m[1]), error: { code: ErrorCode.message_too_large, message: `message exceeds ${maxBytes} bytes` } });
    }
    this._stderr("warn", `skipped a message over the ${maxBytes}-byte limit`);
  }

  /** @param {unknown} msg */
  _send(msg) {
    this._write?.(JSON.stringify(msg));
  }

  /** @param {string} level @param {string} msg @param {Record<string, unknown>} [fields] */
  _stderr(level, msg, fields) {
    const name = this.info.name || "extension";
    const f = fields && Object.keys(fields).length ? " " + JSON.stringify(logFields(fields)) : "";
    process.stderr.write(`[${level.toUpperCase()}] ${name}: ${msg}${f}\n`);
  }

  /** @param {string} line @param {number} maxBytes */
  _receive(line, maxBytes) {
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() === "") return;
    if (Buffer.byteLength(line) > maxBytes) return this._tooLarge(line, maxBytes);
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this._stderr("warn", "skipping a line that is not JSON", { line: line.slice(0, 200) });
      return;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      this._stderr("warn", "skipping a message that is not a JSON object", { line: line.slice(0, 200) });
      return;
    }
    const hasID = msg.id !== undefined && msg.id !== null;
    const idOK = typeof msg.id === "string" || (typeof msg.id === "number" && Number.isInteger(msg.id));
    if (!("method" in msg)) {
      if (hasID) this._response(msg);
      return;
    }
    if (typeof msg.method !== "string" || (msg.jsonrpc !== undefined && msg.jsonrpc !== "2.0") || (hasID && !idOK)) {
      if (hasID && idOK) this._send({ jsonrpc: "2.0", id: msg.id, error: { code: ErrorCode.invalid_request, message: "invalid request" } });
      this._stderr("warn", "skipping an invalid message", { line: line.slice(0, 200) });
      return;
    }
    const params = msg.params === null ? undefined : msg.params;
    if (!hasID) return this._notification(msg.method, params);
    this._request(msg.method, params, msg.id);
  }

  /** @param {any} msg */
  _response(msg) {
    const p = typeof msg.id === "number" ? this._pending.get(msg.id) : undefined;
    if (!p) return;
    this._pending.delete(msg.id);
    if (msg.error !== undefined) {
      const e = msg.error ?? {};
      p.reject(new YepError(typeof e.code === "number" ? e.code : 0, String(e.message ?? ""), { data: e.data, retryable: !!e.retryable }));
    } else p.resolve(msg.result);
  }

  /** @param {string} method @param {any} params */
  _notification(method, params) {
    switch (method) {
      case Method.Exit:
        this._finish?.();
        return;
      case Method.Initialized: {
        const fn = this._onInitialized;
        if (fn && this._session) this._queue(() => fn());
        return;
      }
      case Method.TraceEvent: {
        const fn = this._onTrace;
        if (!fn || !this._session || !isObject(params)) return;
        this._queue(() => fn(params));
        return;
      }
      case Method.WorkspaceChanged: {
        const fn = this._onWorkspace;
        if (!fn || !this._session || !isObject(params)) return;
        this._queue(() => fn(String(params.workspace_root ?? "")));
        return;
      }
    }
  }

  /** @param {() => unknown} f */
  _queue(f) {
    this._events = this._events.then(async () => {
      try {
        await f();
      } catch (e) {
        this._stderr("error", "event callback failed", { error: String(/** @type {Error} */ (e)?.message ?? e) });
      }
    });
  }

  /** @param {string} method @param {any} params @param {ID} id */
  _request(method, params, id) {
    const key = idKey(id);
    if (method === Method.Cancel) {
      const ac = isObject(params) ? this._incoming.get(idKey(params.id)) : undefined;
      this._send({ jsonrpc: "2.0", id, result: { cancelled: ac !== undefined } });
      ac?.abort(CANCELLED);
      return;
    }
    if (this._incoming.has(key)) {
      this._send({ jsonrpc: "2.0", id, error: { code: ErrorCode.invalid_request, message: `request id ${key} is already in flight` } });
      return;
    }
    const ac = new AbortController();
    this._incoming.set(key, ac);
    Promise.resolve()
      .then(() => this._handle(method, params, id, ac.signal))
      .then(
        (result) => (ac.signal.aborted ? { error: CANCELLED.toJSON() } : { result }),
        (err) => ({ error: this._wireError(err, ac.signal) }),
      )
      .then((out) => {
        this._incoming.delete(key);
        this._send({ jsonrpc: "2.0", id, ...out });
      });
  }

  /** @param {unknown} err @param {AbortSignal} signal */
  _wireError(err, signal) {
    if (signal.aborted) return CANCELLED.toJSON();
    if (err instanceof YepError) return err.toJSON();
    return { code: ErrorCode.internal_error, message: String(/** @type {Error} */ (err)?.message ?? err) };
  }

  /**
   * @param {string} method
   * @param {any} params
   * @param {ID} id
   * @param {AbortSignal} signal
   * @returns {Promise<unknown>}
   */
  async _handle(method, params, id, signal) {
    const name = JSON.stringify(this.info.name);
    if (method === Method.Initialize) return this._initialize(params);
    if (!this._session) throw new YepError(ErrorCode.not_initialized, `extension ${name}: ${method} before initialize; send initialize first`);
    if (this._shutdown && method !== Method.Shutdown) throw new YepError(ErrorCode.invalid_request, `extension ${name}: ${method} after shutdown; only exit may follow`);
    if (params !== undefined && !isObject(params)) throw new YepError(ErrorCode.invalid_params, `extension ${name}: ${method}: invalid params: not an object`);
    const p = params ?? {};
    switch (method) {
      case Method.ToolCall:
        return this._callTool(p, id, signal);
      case Method.HookFire:
        return this._fireHook(p, signal);
      case Method.PromptContribution:
        return this._promptContribution(p, signal);
      case Method.CommandExecute:
        return this._executeCommand(p, signal);
      case Method.ConfigChanged:
        return this._configChanged(p, signal);
      case Method.Shutdown:
        this._shutdown = true;
        return {};
    }
    throw new YepError(ErrorCode.method_not_found, `extension ${name} does not serve method ${JSON.stringify(method)}`);
  }

  /** @param {any} params */
  async _initialize(params) {
    const name = JSON.stringify(this.info.name);
    if (params !== undefined && !isObject(params)) throw new YepError(ErrorCode.invalid_params, `extension ${name}: initialize: invalid params: not an object`);
    const p = /** @type {InitializeParams} */ (params ?? {});
    if (this._session || this._initializing) throw new YepError(ErrorCode.invalid_request, `extension ${name}: initialize received twice; it opens the connection once`);
    this._initializing = true;
    try {
      const theirs = typeof p.protocol_version === "string" && p.protocol_version !== "" ? p.protocol_version : PROTOCOL_VERSION;
      const t = parseVersion(theirs);
      const ours = /** @type {{major: number, minor: number}} */ (parseVersion(PROTOCOL_VERSION));
      const data = { protocol_version: PROTOCOL_VERSION, min_protocol_version: MIN_PROTOCOL_VERSION };
      if (!t) throw new YepError(ErrorCode.invalid_request, `extension ${name}: protocol version ${JSON.stringify(theirs)}: want MAJOR.MINOR, e.g. "${PROTOCOL_VERSION}"`, { data });
      if (t.major !== ours.major)
        throw new YepError(ErrorCode.invalid_request, `extension ${name}: host protocol version ${t.major}.${t.minor} is incompatible with the server's ${PROTOCOL_VERSION} (majors must match); update the extension or yolop`, { data });
      const v = t.minor < ours.minor ? t : ours;
      if (this._onConfig) {
        try {
          await this._onConfig(p.config);
        } catch (e) {
          if (e instanceof YepError) throw e;
          throw new YepError(ErrorCode.invalid_params, `extension ${name}: config rejected: ${errText(e)}`);
        }
      }
      const host = Array.isArray(p.capabilities) ? p.capabilities : [];
      this._session = { params: p, host: new Set(host.filter((c) => typeof c === "string")) };
      /** @type {Record<string, unknown>} */
      const res = { protocol_version: `${v.major}.${v.minor}` };
      if (this.info.name) res.name = this.info.name;
      if (this.info.version) res.version = this.info.version;
      const caps = this.capabilities();
      if (caps.capabilities.length > 0) res.capabilities = caps.capabilities;
      if (caps.capability_params) res.capability_params = caps.capability_params;
      return res;
    } finally {
      this._initializing = false;
    }
  }

  /** @param {any} p @param {ID} id @param {AbortSignal} signal */
  async _callTool(p, id, signal) {
    const t = this._tools.get(p.name);
    if (!t) {
      throw new YepError(ErrorCode.invalid_params, `extension ${JSON.stringify(this.info.name)} has no tool ${JSON.stringify(p.name ?? "")} (it serves: ${[...this._tools.keys()].join(", ") || "none"})`);
    }
    const call = new ToolCall(this, t, p, id, signal);
    let res;
    try {
      res = await t.handler(call);
    } catch (e) {
      if (signal.aborted) throw CANCELLED;
      if (e instanceof YepError) throw e;
      return { output: errText(e), is_error: true };
    }
    return toolResult(res);
  }

  /** @param {any} p @param {AbortSignal} signal */
  async _fireHook(p, signal) {
    const payload = isObject(p.payload) ? p.payload : {};
    const ev = {
      event: String(p.event ?? ""),
      toolName: String(p.toolName ?? ""),
      matcher: "",
      toolCallId: String(payload.tool_call_id ?? ""),
      args: payload.args,
      result: payload.result,
      traceparent: p.traceparent ?? "",
      tracestate: p.tracestate ?? "",
      signal,
    };
    /** @type {Record<string, unknown>} */
    const out = { decision: "allow" };
    for (const h of this._hooks) {
      if (h.event !== ev.event) continue;
      if (p.matcher ? h.matcher !== p.matcher : !h.re.test(ev.toolName)) continue;
      ev.matcher = h.matcher;
      const what = `hook ${h.event} ${JSON.stringify(h.matcher)}`;
      let res;
      try {
        res = (await h.handler(ev)) ?? {};
      } catch (e) {
        if (signal.aborted) throw CANCELLED;
        if (e instanceof YepError) throw e;
        throw new YepError(ErrorCode.unclassified, `extension ${JSON.stringify(this.info.name)}: ${what} failed on tool ${JSON.stringify(ev.toolName)}: ${errText(e)}`);
      }
      switch (res.decision ?? "") {
        case "":
        case "allow":
          break;
        case "block": {
          /** @type {Record<string, unknown>} */
          const b = { decision: "block" };
          if (res.reason) b.reason = res.reason;
          return b;
        }
        case "mutate":
          out.decision = "mutate";
          if (res.reason) out.reason = res.reason;
          else delete out.reason;
          if (res.args !== undefined) ev.args = out.args = res.args;
          if (res.result !== undefined) ev.result = out.result = toolResult(res.result);
          break;
        default:
          throw new YepError(ErrorCode.internal_error, `extension ${JSON.stringify(this.info.name)}: ${what} answered decision ${JSON.stringify(res.decision)}; want allow, block or mutate`);
      }
    }
    return out;
  }

  /** @param {any} p @param {AbortSignal} signal */
  async _promptContribution(p, signal) {
    const name = JSON.stringify(this.info.name);
    if (!this._dynamicPrompt) throw new YepError(ErrorCode.method_not_found, `extension ${name} did not declare a dynamic prompt`);
    try {
      const text = await this._dynamicPrompt(p, { signal });
      return { text: String(text ?? "") };
    } catch (e) {
      throw this._handlerError(e, signal, "dynamicPrompt");
    }
  }

  /** @param {any} p @param {AbortSignal} signal */
  async _executeCommand(p, signal) {
    const full = String(p.name ?? "");
    const prefix = this.info.name + ":";
    const cname = full.startsWith(prefix) ? full.slice(prefix.length) : full;
    const c = this._commands.get(cname);
    if (!c) {
      throw new YepError(ErrorCode.invalid_params, `extension ${JSON.stringify(this.info.name)} has no command ${JSON.stringify(full)} (it serves: ${[...this._commands.keys()].join(", ") || "none"})`);
    }
    let res;
    try {
      res = await c.handler(String(p.arguments ?? ""), { signal });
    } catch (e) {
      if (signal.aborted) throw CANCELLED;
      if (e instanceof YepError) throw e;
      return { success: false, message: errText(e) };
    }
    if (typeof res === "string") return res ? { success: true, message: res } : { success: true };
    if (res === undefined || res === null) return { success: true };
    /** @type {Record<string, unknown>} */
    const out = { success: !!res.success };
    if (res.message) out.message = res.message;
    return out;
  }

  /** @param {any} p @param {AbortSignal} signal */
  async _configChanged(p, signal) {
    if (!this._onConfigChanged) {
      throw new YepError(ErrorCode.method_not_found, `extension ${JSON.stringify(this.info.name)} did not declare config (no onConfigChanged handler); restart it to apply a new config`);
    }
    try {
      const restart = await this._onConfigChanged(p.config, { signal });
      return { status: restart ? "restart-required" : "ok" };
    } catch (e) {
      throw this._handlerError(e, signal, "onConfigChanged");
    }
  }

  /** @param {unknown} e @param {AbortSignal} signal @param {string} what */
  _handlerError(e, signal, what) {
    if (signal.aborted) return CANCELLED;
    if (e instanceof YepError) return e;
    return new YepError(ErrorCode.unclassified, `extension ${JSON.stringify(this.info.name)}: ${what}: ${errText(e)}`);
  }

  /**
   * @param {string} fn
   * @param {string} method
   * @param {boolean} declared
   * @param {string} field
   * @param {string} token the capability the host must have advertised
   */
  _permitted(fn, method, declared, field, token) {
    try {
      this._gate(fn, method, declared, field, token);
      return true;
    } catch (e) {
      if (e instanceof SDKError && e.code === "not_advertised") return false;
      throw e;
    }
  }

  /**
   * Throws an SDKError unless a server-to-host method may be sent.
   * @param {string} fn
   * @param {string} method
   * @param {boolean} declared
   * @param {string} field
   * @param {string} token the capability the host must have advertised
   */
  _gate(fn, method, declared, field, token) {
    const name = JSON.stringify(this.info.name);
    if (!declared) throw new SDKError("not_declared", `extension ${name}: ${fn}: ${method} is not declared by this server: set ${field} in the Server info (and declare it in the manifest)`);
    if (!this._session) throw new SDKError("not_initialized", `extension ${name}: ${fn}: the initialize handshake has not completed; call it from a handler or after onConfig`);
    if (!this._session.host.has(token)) throw new SDKError("not_advertised", `extension ${name}: ${fn}: ${method} is not advertised by the host (it has no surface for it in this mode); carry on without it`);
  }

  /**
   * Sets the extension's status text in the host's status bar; "" clears
   * it. Returns true when sent, and false when the host did not advertise
   * "status" (it has no status bar in this mode; carry on without it).
   * Throws an SDKError when info.status is not set (not_declared) or
   * before the handshake (not_initialized).
   * @param {string} text
   * @returns {boolean}
   */
  status(text) {
    if (!this._permitted("status()", Method.StatusChanged, this.info.status, "status: true", Capability.Status)) return false;
    this._send({ jsonrpc: "2.0", method: Method.StatusChanged, params: { text: String(text) } });
    return true;
  }

  /**
   * Asks the user a question through the host (ui/ask) and resolves with
   * the answer. Needs info.uiAsk and a host that advertised "ui_ask";
   * otherwise it rejects with an SDKError and sends nothing. A dismissed
   * question resolves with cancelled set; an aborted signal sends cancel to
   * the host and rejects with the cancelled YepError.
   * @param {UIAskParams} question
   * @param {{signal?: AbortSignal}} [opts]
   * @returns {Promise<UIAskResult>}
   */
  async ask(question, opts = {}) {
    this._gate("ask()", Method.UiAsk, this.info.uiAsk, "uiAsk: true", Capability.UiAsk);
    /** @type {Record<string, unknown>} */
    const q = { prompt: question.prompt };
    if (question.placeholder) q.placeholder = question.placeholder;
    if (question.secret) q.secret = true;
    if (question.options?.length) q.options = question.options;
    const res = await this._call(Method.UiAsk, q, opts.signal);
    const r = isObject(res) ? res : {};
    /** @type {UIAskResult} */
    const out = { answer: typeof r.answer === "string" ? r.answer : "" };
    if (r.cancelled) out.cancelled = true;
    return out;
  }

  /**
   * Sends a request to the host and resolves with its result.
   * @param {string} method
   * @param {unknown} params
   * @param {AbortSignal} [signal]
   */
  _call(method, params, signal) {
    if (signal?.aborted) return Promise.reject(CANCELLED);
    const id = this._nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this._pending.delete(id)) return;
        const cancelId = this._nextId++;
        this._send({ jsonrpc: "2.0", id: cancelId, method: Method.Cancel, params: { id } });
        reject(CANCELLED);
      };
      this._pending.set(id, {
        resolve: (v) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(v);
        },
        reject: (e) => {
          signal?.removeEventListener("abort", onAbort);
          reject(e);
        },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this._send({ jsonrpc: "2.0", id, method, params });
    });
  }

  /**
   * Records a structured log line: to the host as a log notification when
   * info.log is set and the host advertised "log", otherwise to stderr.
   * @param {"trace"|"debug"|"info"|"warn"|"error"} level
   * @param {string} message
   * @param {Record<string, unknown>} [fields]
   */
  log(level, message, fields) {
    const lvl = LEVELS.includes(level) ? level : "info";
    if (this._session && this.info.log && this._session.host.has(Capability.Log)) {
      /** @type {Record<string, unknown>} */
      const p = { level: lvl, message: String(message) };
      if (fields && Object.keys(fields).length > 0) {
        p.fields = logFields(fields);
      }
      this._send({ jsonrpc: "2.0", method: Method.Log, params: p });
      return;
    }
    this._stderr(lvl, String(message), fields);
  }
}

/**
 * A ToolCall is one tool invocation handed to a tool handler.
 */
export class ToolCall {
  /**
   * @param {Server} server
   * @param {{name: string, streaming: boolean}} tool
   * @param {any} p the tool/call params
   * @param {ID} requestId
   * @param {AbortSignal} signal
   */
  constructor(server, tool, p, requestId, signal) {
    /** The host's tool_call_id. */
    this.id = String(p.tool_call_id ?? "");
    /** The tool name. */
    this.name = tool.name;
    /** The arguments: {} when the host sent none. */
    this.args = isObject(p.args) ? p.args : p.args === undefined || p.args === null ? {} : p.args;
    /** The session the call belongs to, if the host sent it. */
    this.sessionId = String(p.session_id ?? "");
    /** The JSON-RPC id of the tool/call request; tool/update carries it as request_id. */
    this.requestId = requestId;
    /** The W3C traceparent of the host's span for the call, or "". */
    this.traceparent = String(p.traceparent ?? "");
    /** The W3C tracestate, or "". */
    this.tracestate = String(p.tracestate ?? "");
    /** Aborted when the host cancels the call or the connection ends. */
    this.signal = signal;
    this._server = server;
    this._streaming = tool.streaming;
  }

  /**
   * Streams a chunk of partial output as tool/update, correlated by
   * request_id and tool_call_id. Returns true when sent, false when the
   * host did not advertise "streaming" or the call was cancelled (nothing
   * is sent; carry on). Throws an SDKError when the tool was registered
   * without {streaming: true} (not_declared).
   * @param {string} output
   * @returns {boolean}
   */
  update(output) {
    return this._send({ output: String(output) });
  }

  /**
   * Reports progress as tool/update, with the rules of update(). total may
   * be 0 when unknown.
   * @param {number} current
   * @param {number} [total]
   * @param {string} [message]
   * @returns {boolean}
   */
  progress(current, total = 0, message = "") {
    /** @type {Record<string, unknown>} */
    const pr = { current };
    if (total) pr.total = total;
    if (message) pr.message = message;
    return this._send({ progress: pr });
  }

  /** @param {Record<string, unknown>} body @returns {boolean} */
  _send(body) {
    const s = this._server;
    if (!this._streaming) throw new SDKError("not_declared", `tool ${JSON.stringify(this.name)}: tool/update is not declared by this server: register the tool with {streaming: true}`);
    if (!s._session) throw new SDKError("not_initialized", `tool ${JSON.stringify(this.name)}: tool/update: the initialize handshake has not completed`);
    if (!s._session.host.has(Capability.Streaming)) return false; // the host shows no progress in this mode
    if (this.signal.aborted) return false; // the call is over; its result is the cancelled error
    /** @type {Record<string, unknown>} */
    const params = { request_id: this.requestId };
    if (this.id) params.tool_call_id = this.id;
    s._send({ jsonrpc: "2.0", method: Method.ToolUpdate, params: { ...params, ...body } });
    return true;
  }
}

/** @param {unknown} v @returns {v is Record<string, any>} */
function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Log fields as they go on the wire: an Error becomes its message, and
 * undefined null.
 * @param {Record<string, unknown>} fields
 */
function logFields(fields) {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v instanceof Error ? v.message : v === undefined ? null : v]));
}

/** @param {unknown} id */
function idKey(id) {
  return JSON.stringify(id ?? null);
}

/** @param {unknown} e */
function errText(e) {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The wire form of a handler's tool result: a string is the output.
 * @param {unknown} res
 */
function toolResult(res) {
  if (res === undefined || res === null) return { output: "" };
  if (typeof res !== "object") return { output: String(res) };
  const r = /** @type {Record<string, unknown>} */ (res);
  /** @type {Record<string, unknown>} */
  const out = { output: typeof r.output === "string" ? r.output : r.output === undefined ? "" : String(r.output) };
  if (r.is_error) out.is_error = true;
  if (r.data !== undefined && r.data !== null) out.data = r.data;
  return out;
}
