package yep

import (
	"slices"

	"yolop.dev/core/internal/json"
)

// Capability tokens. The vocabulary is open: a peer may announce tokens this
// package does not know, and they are carried verbatim.
const (
	CapTools         = "tools"
	CapStreaming     = "streaming"
	CapHooks         = "hooks"
	CapPrompt        = "prompt"
	CapDynamicPrompt = "dynamic_prompt"
	CapMCPServers    = "mcp_servers"
	CapCommands      = "commands"
	CapUIAsk         = "ui_ask"
	CapTrace         = "trace"
	CapCancel        = "cancel"
	CapStatus        = "status"
	CapLog           = "log"
	CapConfig        = "config"
	CapWorkspace     = "workspace"
	CapProvider      = "provider"
)

// KnownCapabilities lists the tokens this version defines, in a stable order.
var KnownCapabilities = []string{
	CapTools, CapStreaming, CapHooks, CapPrompt, CapDynamicPrompt,
	CapMCPServers, CapCommands, CapUIAsk, CapTrace, CapCancel, CapStatus,
	CapLog, CapConfig, CapWorkspace, CapProvider,
}

// Capabilities is a set of capability tokens as sent on the wire.
type Capabilities []string

// Has reports whether token is present.
func (c Capabilities) Has(token string) bool { return slices.Contains(c, token) }

// CapabilityParams carries structured parameters per capability token. Keys
// and values this package does not know are kept verbatim.
type CapabilityParams map[string]json.RawMessage

// Decode decodes the params of token into v, matching object keys to
// v's fields case-sensitively. It reports false, with a nil error, when
// token has no params.
func (p CapabilityParams) Decode(token string, v any) (bool, error) {
	raw, ok := p[token]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

// Set encodes v as the params of token.
func (p CapabilityParams) Set(token string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	p[token] = raw
	return nil
}

// Hook events. The two tool events fire around a tool call and their
// matcher is a tool-name glob; the lifecycle events fire at points of a
// session and its turns, and their matcher is a glob over the event's
// subject, the payload's source (see [HookPayload]).
const (
	HookPreToolUse  = "pre_tool_use"
	HookPostToolUse = "post_tool_use"
	// HookSessionStart fires once as a session begins, before its first
	// turn; a hook's context goes into the dynamic segment of the system
	// prompt. Its subject is the payload's source ("startup").
	HookSessionStart = "session_start"
	// HookSessionEnd fires once as a session ends. Its subject is the
	// payload's source (why it ended, e.g. "exit").
	HookSessionEnd = "session_end"
	// HookUserPromptSubmit fires for each user message before the model
	// sees it; a hook may block the message (its reason goes to the user)
	// or add context the model reads with it.
	HookUserPromptSubmit = "user_prompt_submit"
	// HookStop fires when the model ends a turn; a hook may refuse the
	// end once per turn, and its reason goes to the model as a user
	// message.
	HookStop = "stop"
	// HookPreCompact fires before old context is dropped or summarised.
	// Its subject is the payload's source ("auto" or "manual").
	HookPreCompact = "pre_compact"
	// HookNotification fires when the agent is waiting for the user. Its
	// subject is the payload's source (e.g. "approval", "idle").
	HookNotification = "notification"
	// HookPostToolUseFailure fires after a tool call failed or was
	// interrupted, with the error, instead of post_tool_use. Its matcher
	// is a tool-name glob.
	HookPostToolUseFailure = "post_tool_use_failure"
)

// HookEvents lists the hook events this version defines.
var HookEvents = []string{HookPreToolUse, HookPostToolUse, HookSessionStart, HookSessionEnd,
	HookUserPromptSubmit, HookStop, HookPreCompact, HookNotification, HookPostToolUseFailure}

// HookBlocking reports whether a hook of event can block what it fires
// for: the tool events, user_prompt_submit and stop. A block of any other
// event is reported but changes nothing, and its on_error only decides
// how a failure is reported.
func HookBlocking(event string) bool {
	switch event {
	case HookPreToolUse, HookPostToolUse, HookUserPromptSubmit, HookStop:
		return true
	}
	return false
}

// HookToolEvent reports whether event concerns one tool call, so its
// matcher is a tool-name glob.
func HookToolEvent(event string) bool {
	return event == HookPreToolUse || event == HookPostToolUse || event == HookPostToolUseFailure
}

// What a hook subscription's failure (an error, a timeout or a crash of its
// server) means: its on_error. Empty means HookOnErrorWarn.
const (
	// HookOnErrorWarn lets the tool call go on: the hook fails open.
	HookOnErrorWarn = "warn"
	// HookOnErrorBlock blocks the tool call, or withholds its result after
	// the call: the hook fails closed.
	HookOnErrorBlock = "block"
)

// HookOnErrors lists the on_error values this version defines.
var HookOnErrors = []string{HookOnErrorWarn, HookOnErrorBlock}

// MCP server transports, the Type of an [MCPServerDecl]. An empty Type
// means MCPStdio, or MCPHTTP when the declaration carries a URL.
const (
	MCPStdio = "stdio"
	MCPHTTP  = "http"
)

// MCPTransports lists the MCP server transports this version defines.
var MCPTransports = []string{MCPStdio, MCPHTTP}

// Trace event types forwarded as trace/event.
const (
	TraceTurnStarted     = "turn.started"
	TraceTurnCompleted   = "turn.completed"
	TraceReasonStarted   = "reason.started"
	TraceReasonCompleted = "reason.completed"
	TraceActStarted      = "act.started"
	TraceActCompleted    = "act.completed"
	TraceToolStarted     = "tool.started"
	TraceToolCompleted   = "tool.completed"
	TraceLLMGeneration   = "llm.generation"
	// TraceHookFired is one hook/fire of a tool call, sent when the hook
	// has answered: a span of its own, child of the call's tool span,
	// whose data names the hook's event, tool, extension and capability,
	// the decision (allow, block, mutate, or error when the hook failed),
	// the reason, the error, and duration_ms.
	TraceHookFired = "hook.fired"
	// TraceToolApproval is the approval decision on one tool call (see
	// [ToolApprovalData]), under the call's tool span.
	TraceToolApproval     = "tool.approval"
	TraceSessionStarted   = "session.started"
	TraceSessionCompleted = "session.completed"
)

// TraceEventTypes lists the trace event types this version defines.
var TraceEventTypes = []string{
	TraceSessionStarted, TraceSessionCompleted,
	TraceTurnStarted, TraceTurnCompleted, TraceReasonStarted, TraceReasonCompleted,
	TraceActStarted, TraceActCompleted, TraceToolStarted, TraceToolCompleted,
	TraceLLMGeneration, TraceHookFired, TraceToolApproval,
}
