package host

import (
	"context"
	"encoding/json"

	"yolop.dev/core/yep"
)

// A Capability contributes tools, prompt text, hooks, commands, MCP servers,
// skills and a config schema to a session. Built-ins implement it directly;
// [Extension] implements it for an installed extension.
//
// Static seams (Tools, Hooks, Commands, MCPServers, Skills, ConfigSchema)
// must be cheap and may be called at any time. The others may block and
// must honour their context.
type Capability interface {
	// Name identifies the capability, e.g. "ext:lsp" or "builtin:fs".
	Name() string
	// Tools lists the tools the capability serves, by their own names.
	Tools() []ToolDef
	// CallTool runs one tool. onUpdate, if not nil, receives streamed
	// updates in order before CallTool returns.
	CallTool(ctx context.Context, call ToolCall, onUpdate func(yep.ToolUpdateParams)) (yep.ToolResult, error)
	// Prompt returns this turn's system-prompt contribution.
	Prompt(ctx context.Context, turn int) (string, error)
	// Hooks lists hook subscriptions.
	Hooks() []HookGrant
	// FireHook fires one subscription and returns its decision.
	FireHook(ctx context.Context, sub HookGrant, p yep.HookFireParams) (yep.HookFireResult, error)
	// Commands lists slash commands, by their own (unqualified) names.
	Commands() []CommandGrant
	// ExecuteCommand runs one command.
	ExecuteCommand(ctx context.Context, name, args string) (yep.CommandExecuteResult, error)
	// MCPServers lists contributed MCP servers.
	MCPServers() []yep.MCPServerDecl
	// Skills lists contributed skill directories.
	Skills() []string
	// ConfigSchema returns the config schema, or nil.
	ConfigSchema() json.RawMessage
}

// A ToolDef describes one tool of a capability.
type ToolDef struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	NeverDefer  bool
	Streaming   bool
	Approval    string
	Risk        string
	Narration   string
	// TimeoutMS is the tool's own upper bound on one call, in
	// milliseconds; 0 means none declared. See [SessionOptions.ToolTimeout]
	// for how it combines with the session's limit.
	TimeoutMS int
}

// A ToolCall is one invocation of a tool.
type ToolCall struct {
	// ID is the tool_call_id the agent assigned.
	ID string
	// Name is the capability's own tool name (not the session's qualified
	// name).
	Name string
	// Args are the checked arguments, a JSON object; [Session.CallTool]
	// makes absent arguments {}.
	Args json.RawMessage
	// TraceParent is the W3C traceparent of the host's span for the call;
	// an extension sends it with tool/call. Empty means none.
	TraceParent string
}

// Base is an embeddable Capability that contributes nothing; built-ins embed
// it and override what they provide.
type Base struct{}

func (Base) Tools() []ToolDef { return nil }
func (Base) CallTool(context.Context, ToolCall, func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	return yep.ToolResult{}, yep.ErrMethodNotFound
}
func (Base) Prompt(context.Context, int) (string, error) { return "", nil }
func (Base) Hooks() []HookGrant                          { return nil }
func (Base) FireHook(context.Context, HookGrant, yep.HookFireParams) (yep.HookFireResult, error) {
	return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
}
func (Base) Commands() []CommandGrant { return nil }
func (Base) ExecuteCommand(context.Context, string, string) (yep.CommandExecuteResult, error) {
	return yep.CommandExecuteResult{}, yep.ErrMethodNotFound
}
func (Base) MCPServers() []yep.MCPServerDecl { return nil }
func (Base) Skills() []string                { return nil }
func (Base) ConfigSchema() json.RawMessage   { return nil }

// An AskSink puts a server's question to the user. It must honour ctx.
type AskSink interface {
	Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error)
}

// A StatusSink shows an extension's status text; empty text clears it.
type StatusSink interface {
	SetStatus(ext, text string)
}
