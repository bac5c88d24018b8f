package yep

import "encoding/json"

// InitializeParams opens the handshake (host → server, request).
type InitializeParams struct {
	// ProtocolVersion is the host's version, MAJOR.MINOR.
	ProtocolVersion string `json:"protocol_version"`
	// SessionID names the session; reserved on every request so one server
	// could later serve several sessions.
	SessionID string `json:"session_id,omitempty"`
	// WorkspaceRoot is the active workspace directory.
	WorkspaceRoot string `json:"workspace_root,omitempty"`
	// Locale is the user's locale, e.g. "en-US".
	Locale string `json:"locale,omitempty"`
	// Config is the extension's validated, non-secret capability config.
	// Secret fields never appear here: they reach the server as env.
	Config json.RawMessage `json:"config,omitempty"`
	// Capabilities is the host feature set: the server-to-host methods the
	// host accepts (ui_ask, status, log) and host behaviours (cancel,
	// streaming, hooks, trace, workspace).
	Capabilities Capabilities `json:"capabilities,omitempty"`
	// CapabilityParams carries structured host parameters per token.
	CapabilityParams CapabilityParams `json:"capability_params,omitempty"`
}

// InitializeResult is the server's half of the handshake. Its contributions
// are clamped by the approved manifest: the host refuses anything wider.
type InitializeResult struct {
	ProtocolVersion string `json:"protocol_version"`
	Name            string `json:"name,omitempty"`
	Version         string `json:"version,omitempty"`
	// Capabilities is what the server contributes and accepts.
	Capabilities Capabilities `json:"capabilities,omitempty"`
	// CapabilityParams details each contribution: "tools" holds
	// []ToolDecl, "prompt" a PromptDecl, "hooks" []HookSubscription,
	// "mcp_servers" []MCPServerDecl, "commands" []CommandDecl, "provider" a
	// ProviderParams.
	CapabilityParams CapabilityParams `json:"capability_params,omitempty"`
}

// ToolDecl is one served tool in the handshake. Definitions (description,
// schema, policy) live in the manifest; the handshake only names the tools
// the server serves, which narrows the approved set.
type ToolDecl struct {
	Name string `json:"name"`
	// InputSchema is the JSON Schema of the tool's arguments, as the
	// server derived it from its handler's types, when it did (the Go
	// SDK's typed tools). It is informative: the host clamps to the
	// manifest's input_schema and never takes a schema from the server;
	// `yolop ext doctor` fails a tool whose derived input schema disagrees
	// with the manifest's. It and OutputSchema are optional members of the
	// open capability_params vocabulary, added without a version bump.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputSchema is the JSON Schema of the tool's structured result,
	// derived the same way; informative only.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// PromptDecl is the prompt contribution in the handshake.
type PromptDecl struct {
	// Static is text appended to the environment-context segment of the
	// system prompt.
	Static string `json:"static,omitempty"`
	// Dynamic says the host should ask prompt/contribution once per turn.
	Dynamic bool `json:"dynamic,omitempty"`
}

// HookSubscription is one hook subscription in the handshake.
type HookSubscription struct {
	// Event is a hook event, e.g. "pre_tool_use".
	Event string `json:"event"`
	// Matcher is a tool-name glob; a match-all matcher must be spelled "*".
	Matcher string `json:"matcher,omitempty"`
	// TimeoutMS bounds one firing; 0 means the host default.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// OnError is "warn" (default) or "block": what a timeout or error means.
	OnError string `json:"on_error,omitempty"`
}

// MCPServerDecl is one MCP server the extension provides.
type MCPServerDecl struct {
	Name string `json:"name"`
	// Type is "stdio" or "http".
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	// Headers are sent with every request to an "http" server. In Env and
	// Headers, ${VAR} names a variable of the extension's own resolved
	// environment (its env and secret config fields), which the host
	// substitutes, so a credential never passes through the handshake.
	Headers map[string]string `json:"headers,omitempty"`
}

// CommandDecl is one slash command the extension provides.
type CommandDecl struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// InitializedParams completes the handshake (host → server, notification).
type InitializedParams struct{}

// ToolCallParams asks the server to run one tool (host → server, request).
type ToolCallParams struct {
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name"`
	Args       json.RawMessage `json:"args,omitempty"`
	SessionID  string          `json:"session_id,omitempty"`
	// TraceParent is the W3C Trace Context traceparent of the host's span
	// for this call ("00-<32 hex trace id>-<16 hex span id>-<2 hex flags>"),
	// so a server can make its own spans children of it. Optional; a
	// server that does not trace ignores it.
	TraceParent string `json:"traceparent,omitempty"`
	// TraceState is the W3C tracestate that goes with TraceParent, carried
	// verbatim. Optional.
	TraceState string `json:"tracestate,omitempty"`
}

// ToolResult is the final result of a tool call, shaped like the host's
// ToolExecutionResult.
type ToolResult struct {
	// Output is the text the agent reads.
	Output string `json:"output"`
	// IsError marks a tool-level failure the agent should see (distinct
	// from a protocol error).
	IsError bool `json:"is_error,omitempty"`
	// Data is optional structured output.
	Data json.RawMessage `json:"data,omitempty"`
}

// ToolUpdateParams streams progress or partial output of a running tool
// call (server → host, notification). It correlates to its call by
// RequestID, the JSON-RPC id of the tool/call request.
type ToolUpdateParams struct {
	RequestID  ID     `json:"request_id"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Output is a chunk of partial output.
	Output string `json:"output,omitempty"`
	// Progress reports how far the call has come, when known.
	Progress *Progress       `json:"progress,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Progress is a progress report.
type Progress struct {
	Current float64 `json:"current"`
	Total   float64 `json:"total,omitempty"`
	Message string  `json:"message,omitempty"`
}

// CancelParams aborts any in-flight request by id (either direction,
// request). Cancellation is best effort.
type CancelParams struct {
	ID ID `json:"id"`
}

// CancelResult says whether the request was found in flight.
type CancelResult struct {
	Cancelled bool `json:"cancelled"`
}

// PromptContributionParams asks for the dynamic system-prompt contribution
// of this turn (host → server, request, at most once per turn).
type PromptContributionParams struct {
	SessionID string `json:"session_id,omitempty"`
	Turn      int    `json:"turn,omitempty"`
}

// PromptContributionResult is this turn's contribution.
type PromptContributionResult struct {
	Text string `json:"text"`
}

// Hook decisions.
const (
	DecisionAllow  = "allow"
	DecisionBlock  = "block"
	DecisionMutate = "mutate"
)

// HookFireParams fires one hook subscription (host → server, request).
type HookFireParams struct {
	Event string `json:"event"`
	// ToolName is the tool the event concerns; empty for a lifecycle
	// event that concerns no tool.
	ToolName string `json:"toolName"`
	// Matcher is the subscription's tool-name glob, so a server with
	// several subscriptions knows which one fired.
	Matcher string `json:"matcher,omitempty"`
	// Payload is a HookPayload.
	Payload json.RawMessage `json:"payload,omitempty"`
	// TraceParent is the W3C traceparent of the host's span for the tool
	// call this firing belongs to. Optional, as in ToolCallParams.
	TraceParent string `json:"traceparent,omitempty"`
	// TraceState is the W3C tracestate that goes with TraceParent.
	// Optional.
	TraceState string `json:"tracestate,omitempty"`
}

// HookPayload is the payload of a hook firing: for the tool events the
// call's arguments, and for post_tool_use also its result; for the
// lifecycle events the fields their event names.
type HookPayload struct {
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Result     *ToolResult     `json:"result,omitempty"`
	// Error is why the tool call failed or was interrupted
	// (post_tool_use_failure).
	Error string `json:"error,omitempty"`
	// Prompt is the user's message (user_prompt_submit).
	Prompt string `json:"prompt,omitempty"`
	// Message is the text the user is shown while the agent waits
	// (notification), or the model's final answer (stop).
	Message string `json:"message,omitempty"`
	// Source is what the event is about, the subject its matcher globs:
	// "startup" (session_start), why the session ended (session_end),
	// "auto" or "manual" (pre_compact), what the agent waits for
	// (notification).
	Source string `json:"source,omitempty"`
	// StopHookActive says the end of this turn was already refused once
	// (stop): a further block is not honoured.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
}

// HookFireResult is the decision of one subscription. A missing decision
// means allow.
type HookFireResult struct {
	// Decision is "allow", "block" or "mutate".
	Decision string `json:"decision,omitempty"`
	// Reason explains a block (shown to the agent) or a mutation.
	Reason string `json:"reason,omitempty"`
	// Args replaces the call's arguments (mutate on pre_tool_use).
	Args json.RawMessage `json:"args,omitempty"`
	// Result replaces the call's result (mutate on post_tool_use).
	Result *ToolResult `json:"result,omitempty"`
	// Context is text for the model: on session_start it goes into the
	// dynamic segment of the system prompt, on user_prompt_submit with
	// the user's message. Other events ignore it.
	Context string `json:"context,omitempty"`
}

// TraceEventParams forwards one agentic-lifecycle event (host → server,
// notification, never awaited).
type TraceEventParams struct {
	// Type is a trace event type, e.g. "tool.started".
	Type      string `json:"type"`
	SessionID string `json:"session_id,omitempty"`
	TurnID    string `json:"turn_id,omitempty"`
	// TraceID is the W3C trace id (32 lowercase hex digits) of the trace
	// the event belongs to: the host starts one per turn. With it, SpanID
	// and ParentID are W3C span ids (16 lowercase hex digits), and a
	// tool's SpanID is the parent id in the traceparent of its tool/call.
	TraceID string `json:"trace_id,omitempty"`
	// SpanID pairs a *.started event with its *.completed.
	SpanID string `json:"span_id,omitempty"`
	// ParentID is the span the event's span is a child of.
	ParentID string `json:"parent_id,omitempty"`
	// Timestamp is RFC 3339 with nanoseconds.
	Timestamp string `json:"timestamp,omitempty"`
	// Context is carried verbatim.
	Context json.RawMessage `json:"context,omitempty"`
	// Data is the event's payload, typed by Type (see [Events]).
	Data json.RawMessage `json:"data,omitempty"`
}

// Config change outcomes.
const (
	ConfigOK              = "ok"
	ConfigRestartRequired = "restart-required"
)

// ConfigChangedParams pushes a new validated config (host → server,
// request).
type ConfigChangedParams struct {
	Config json.RawMessage `json:"config"`
}

// ConfigChangedResult says whether the server applied the config or needs
// a restart. A missing status means "ok".
type ConfigChangedResult struct {
	Status string `json:"status,omitempty"`
}

// WorkspaceChangedParams repoints the workspace (host → server,
// notification).
type WorkspaceChangedParams struct {
	WorkspaceRoot string `json:"workspace_root"`
}

// UIAskParams asks the user a question (server → host, request). Only a
// server that declared ui_ask may send it.
type UIAskParams struct {
	Prompt      string `json:"prompt"`
	Placeholder string `json:"placeholder,omitempty"`
	// Secret masks the input; the host echoes "(saved)", never the value.
	Secret bool `json:"secret,omitempty"`
	// Options turns the question into a selector.
	Options []string `json:"options,omitempty"`
}

// UIAskResult is the user's answer.
type UIAskResult struct {
	Answer    string `json:"answer"`
	Cancelled bool   `json:"cancelled,omitempty"`
}

// StatusChangedParams sets the extension's status-bar text (server → host,
// notification). Empty text clears it.
type StatusChangedParams struct {
	Text string `json:"text"`
	// StatusChangedUnstable holds fields staged behind the yep_unstable
	// build tag; it is empty in a stable build.
	StatusChangedUnstable
}

// Log levels.
const (
	LogTrace = "trace"
	LogDebug = "debug"
	LogInfo  = "info"
	LogWarn  = "warn"
	LogError = "error"
)

// LogParams is one structured log record (server → host, notification).
type LogParams struct {
	Level   string          `json:"level,omitempty"`
	Message string          `json:"message"`
	Fields  json.RawMessage `json:"fields,omitempty"`
}

// CommandExecuteParams runs a slash command (host → server, request).
type CommandExecuteParams struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

// CommandExecuteResult is shown to the user.
type CommandExecuteResult struct {
	Success bool   `json:"success"`
	Message string `json:"message,omitempty"`
}

// ShutdownParams asks the server to stop (host → server, request); the
// server answers, then waits for exit.
type ShutdownParams struct{}

// ShutdownResult acknowledges shutdown.
type ShutdownResult struct{}

// ExitParams tells the server to exit now (host → server, notification).
type ExitParams struct{}
