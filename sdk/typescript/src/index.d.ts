/**
 * The yolop SDK for TypeScript and JavaScript: a YEP capability server
 * built from handlers, served over stdio. See README.md.
 * @module
 */

import type {
  ID,
  InitializeParams,
  MCPServerDecl,
  PromptContributionParams,
  ToolResult,
  TraceEventParams,
  UIAskParams,
  UIAskResult,
} from "./generated/types.js";

export * from "./generated/meta.js";
export type * from "./generated/types.js";

/** Identifies the server and names the server-to-host methods it opts into. */
export interface ServerInfo {
  /** The extension name, e.g. "echo"; it labels errors and logs. */
  name: string;
  /** The server's own version, e.g. "0.1.0". */
  version?: string;
  /** Opt into status/changed (server.status()); announces "status". */
  status?: boolean;
  /** Opt into ui/ask (server.ask()); announces "ui_ask". */
  uiAsk?: boolean;
  /** Opt into the log notification (server.log() to the host); announces "log". */
  log?: boolean;
}

/** Options of serve(). */
export interface ServeOptions {
  /** Where the host's lines come from; process.stdin by default. */
  input?: NodeJS.ReadableStream;
  /** Where the server's lines go; process.stdout by default. */
  output?: NodeJS.WritableStream;
  /** The limit on one message, in bytes; DEFAULT_MAX_MESSAGE_BYTES by default. */
  maxMessageBytes?: number;
  /** Set false to keep a non-stdin input open when serving ends. */
  destroyInput?: boolean;
}

/** Options of a tool. */
export interface ToolOptions {
  /** The tool streams with call.update() and call.progress(); announces "streaming". */
  streaming?: boolean;
}

/** What a tool handler may return: the output text, or a full result. */
export type ToolReturn = string | ToolResult | void;

/**
 * Runs one tool call. A thrown Error is a tool-level failure the agent
 * reads (is_error); a thrown YepError fails the request at the protocol
 * level. When call.signal aborts, the call is answered -32800 cancelled.
 */
export type ToolHandler<A = any> = (call: ToolCall<A>) => ToolReturn | Promise<ToolReturn>;

/** One tool invocation. */
export declare class ToolCall<A = any> {
  private constructor();
  /** The host's tool_call_id. */
  readonly id: string;
  /** The tool name. */
  readonly name: string;
  /** The arguments; {} when the host sent none. */
  readonly args: A;
  /** The session the call belongs to, if the host sent it. */
  readonly sessionId: string;
  /** The JSON-RPC id of the tool/call request. */
  readonly requestId: ID;
  /** The W3C traceparent of the host's span for the call, or "". */
  readonly traceparent: string;
  /** The W3C tracestate, or "". */
  readonly tracestate: string;
  /** Aborted when the host cancels the call or the connection ends. */
  readonly signal: AbortSignal;
  /**
   * Streams partial output as tool/update (request_id and tool_call_id
   * filled in). Returns false, sending nothing, when the host did not
   * advertise "streaming" or the call was cancelled; throws an SDKError
   * when the tool was registered without {streaming: true}.
   */
  update(output: string): boolean;
  /** Reports progress as tool/update, as update() does; total 0 means unknown. */
  progress(current: number, total?: number, message?: string): boolean;
}

/** One hook firing. */
export interface HookEvent<A = any> {
  /** "pre_tool_use" or "post_tool_use". */
  event: string;
  /** The tool the event concerns. */
  toolName: string;
  /** The glob of the subscription that fired. */
  matcher: string;
  /** The host's tool_call_id, if sent. */
  toolCallId: string;
  /** The tool call's arguments (as mutated by earlier subscriptions of this server). */
  args: A;
  /** The tool's result, for post_tool_use. */
  result?: ToolResult;
  traceparent: string;
  tracestate: string;
  /** Aborted when the host cancels the firing. */
  signal: AbortSignal;
}

/** A hook's decision; nothing (or {}) allows. */
export interface HookDecision {
  decision?: "allow" | "block" | "mutate";
  reason?: string;
  /** The replacement arguments (mutate on pre_tool_use). */
  args?: unknown;
  /** The replacement result (mutate on post_tool_use). */
  result?: ToolResult;
}

/** Decides one hook firing; a thrown error fails it (the host applies on_error). */
export type HookHandler<A = any> = (ev: HookEvent<A>) => HookDecision | void | Promise<HookDecision | void>;

/** The static policy of a hook subscription. */
export interface HookOptions {
  /** Bounds one firing (enforced by the host); 0 means the host default. */
  timeoutMs?: number;
  /** What a timeout or error means: "warn" (default) or "block". */
  onError?: "warn" | "block";
}

/** Per-call context of the prompt, command and config handlers. */
export interface CallContext {
  /** Aborted when the host cancels the request or the connection ends. */
  signal: AbortSignal;
}

/** Computes this turn's dynamic system-prompt contribution. */
export type PromptFunc = (params: PromptContributionParams, ctx: CallContext) => string | Promise<string>;

/** What a command returns: a message (success), or success and message; nothing is success. */
export type CommandReturn = string | { success: boolean; message?: string } | void;

/** Runs a slash command with its raw argument string; a thrown Error is shown as a failure. */
export type CommandHandler = (args: string, ctx: CallContext) => CommandReturn | Promise<CommandReturn>;

/** Fails a request at the protocol level with a JSON-RPC error. */
export declare class YepError extends Error {
  constructor(code: number, message: string, opts?: { data?: unknown; retryable?: boolean });
  readonly code: number;
  readonly data: unknown;
  readonly retryable: boolean;
  toJSON(): { code: number; message: string; retryable?: true; data?: unknown };
}

/** The error a cancelled request is answered with (-32800 "cancelled"). */
export declare const CANCELLED: YepError;

/** A host-facing call that sent nothing, and why. */
export declare class SDKError extends Error {
  constructor(code: "not_declared" | "not_advertised" | "not_initialized", message: string);
  readonly code: "not_declared" | "not_advertised" | "not_initialized";
}

/** The host-to-server methods this SDK's dispatch serves. */
export declare const HANDLED_METHODS: readonly string[];

/** Go path.Match glob matching, as hook matchers use it. */
export declare function globMatch(pattern: string, name: string): boolean;

/** A capability server built from handlers. */
export declare class Server {
  constructor(info: ServerInfo);
  readonly info: Readonly<Required<ServerInfo>>;
  /** Registers a tool; announces "tools" (and "streaming" with {streaming: true}). */
  tool<A = any>(name: string, handler: ToolHandler<A>, opts?: ToolOptions): this;
  /** Subscribes to a hook event for tools matching the glob; announces "hooks". */
  onHook<A = any>(event: string, matcher: string, handler: HookHandler<A>, opts?: HookOptions): this;
  /** Sets the static prompt contribution; announces "prompt". */
  prompt(text: string): this;
  /** Sets the per-turn prompt function; announces "prompt" and "dynamic_prompt". */
  dynamicPrompt(fn: PromptFunc): this;
  /** Registers a slash command "<extension>:<name>"; announces "commands". */
  command(name: string, description: string, handler: CommandHandler): this;
  /** Declares an MCP server; announces "mcp_servers". */
  mcpServer(decl: MCPServerDecl): this;
  /** Called with initialize.config during the handshake; throwing refuses it. */
  onConfig<C = any>(fn: (config: C | undefined) => unknown): this;
  /** Handles config/changed: return true when a restart is needed; announces "config". */
  onConfigChanged<C = any>(fn: (config: C, ctx: CallContext) => boolean | void | Promise<boolean | void>): this;
  /** Receives trace/event notifications in order; announces "trace". */
  onTrace(fn: (event: TraceEventParams) => void | Promise<void>): this;
  /** Called when the host repoints the workspace root. */
  onWorkspaceChanged(fn: (root: string) => void | Promise<void>): this;
  /** Called when the host sends initialized: the handshake is complete. */
  onInitialized(fn: () => void | Promise<void>): this;
  /** What the handshake will announce, from what is registered. */
  capabilities(): { capabilities: string[]; capability_params?: Record<string, unknown> };
  /** The initialize params, once the handshake completed. */
  init(): InitializeParams | undefined;
  /** Serves one connection (stdio by default) until exit or end of input. */
  serve(opts?: ServeOptions): Promise<void>;
  /**
   * Sets (or with "" clears) the status text. Returns false, sending
   * nothing, when the host did not advertise "status"; throws an SDKError
   * when info.status is not set or before the handshake.
   */
  status(text: string): boolean;
  /** Asks the user a question through the host. */
  ask(question: UIAskParams, opts?: { signal?: AbortSignal }): Promise<UIAskResult>;
  /** A structured log line: to the host when permitted, else stderr. */
  log(level: "trace" | "debug" | "info" | "warn" | "error", message: string, fields?: Record<string, unknown>): void;
}
