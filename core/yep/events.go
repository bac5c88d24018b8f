package yep

import (
	"reflect"

	"yolop.dev/core/internal/json"
)

// Session event types beyond the trace event types: a session reports
// them to its subscribers, and does not forward them as trace/event.
const (
	// EventToolUpdate is one tool/update of a call in progress: a chunk of
	// output or a progress report.
	EventToolUpdate = "tool.update"
	// EventStatusChanged is an extension's status/changed.
	EventStatusChanged = "status.changed"
	// EventConfigChanged is a live config change pushed to an extension.
	EventConfigChanged = "config.changed"
	// EventWarning is something the user should read once: a tool name
	// collision, a never_defer budget overrun, a match-all hook.
	EventWarning = "warning"
	// EventExtensionStarted, EventExtensionDegraded and
	// EventExtensionRestarted follow an extension's server: it finished
	// its handshake, it failed (did not start, crashed, was refused), or
	// the host respawned it after a crash.
	EventExtensionStarted   = "extension.started"
	EventExtensionDegraded  = "extension.degraded"
	EventExtensionRestarted = "extension.restarted"
	// EventTextDelta is the next piece of the model's reply as it streams
	// (emitted by the agent loop above the host).
	EventTextDelta = "text.delta"
	// EventToolApproval is [TraceToolApproval], the approval decision on
	// one tool call: the user approved or denied it when asked, the user's
	// policy denied it, or a pre_tool_use hook blocked it. A call allowed
	// without asking has none. Trace consumers get it too.
	EventToolApproval = TraceToolApproval
	// EventHookReport is the session's hook report, sent as it ends: the
	// subscriptions that never fired, timed out or failed.
	EventHookReport = "hook.report"
)

// An EventInfo describes one event type: the Go type of its data, and
// whether a session forwards it to trace consumers as trace/event.
type EventInfo struct {
	Type    string
	Data    reflect.Type // nil: the event carries no data
	Forward bool
	Doc     string
}

// Events lists the event types this version defines, in the order the
// schema lists them. schema.json types trace/event's data by it.
var Events = []EventInfo{
	{TraceSessionStarted, nil, true, "Session.Start finished: the eager extensions ran their handshakes."},
	{TraceSessionCompleted, nil, true, "Session.Close began."},
	{TraceTurnStarted, typeOf[PhaseData](), true, "A turn began: the root span of the turn's trace."},
	{TraceTurnCompleted, typeOf[PhaseData](), true, "A turn ended."},
	{TraceReasonStarted, typeOf[PhaseData](), true, "The agent loop asked the model (emitted by the loop above the host)."},
	{TraceReasonCompleted, typeOf[PhaseData](), true, "The model answered."},
	{TraceActStarted, typeOf[PhaseData](), true, "The agent loop began running the model's tool calls."},
	{TraceActCompleted, typeOf[PhaseData](), true, "The tool calls of a step finished."},
	{TraceToolStarted, typeOf[ToolStartedData](), true, "A tool call began, before its pre_tool_use hooks."},
	{TraceToolCompleted, typeOf[ToolCompletedData](), true, "A tool call ended, after its post_tool_use hooks."},
	{TraceLLMGeneration, typeOf[LLMGenerationData](), true, "One model generation: a single event, not a pair."},
	{TraceHookFired, typeOf[HookFiredData](), true, "One hook/fire answered or failed."},
	{TraceToolApproval, typeOf[ToolApprovalData](), true, "A tool call was asked about and approved or denied, denied by the user's policy, or blocked by a hook; between tool.started and tool.completed."},
	{EventToolUpdate, typeOf[ToolUpdateData](), false, "A tool call streamed output or progress."},
	{EventTextDelta, typeOf[TextDeltaData](), false, "The model's reply streamed another piece of text (emitted by the agent loop)."},
	{EventStatusChanged, typeOf[StatusChangedData](), false, "An extension set or cleared its status text."},
	{EventConfigChanged, typeOf[ConfigChangedData](), false, "An extension's config changed while the session ran."},
	{EventWarning, typeOf[WarningData](), false, "A warning for the user, reported once."},
	{EventExtensionStarted, typeOf[ExtensionData](), false, "An extension's server finished its handshake."},
	{EventExtensionDegraded, typeOf[ExtensionData](), false, "An extension's server failed: it did not start, crashed or was refused."},
	{EventExtensionRestarted, typeOf[ExtensionData](), false, "The host respawned an extension's server after a crash."},
	{EventHookReport, typeOf[HookReportData](), false, "The session ended: the hook subscriptions that never fired, timed out or failed."},
}

// EventFor returns the description of an event type, and false for a type
// this version does not define (the vocabulary is open).
func EventFor(typ string) (EventInfo, bool) {
	for _, e := range Events {
		if e.Type == typ {
			return e, true
		}
	}
	return EventInfo{}, false
}

// DecodeEventData decodes an event's data into its type's payload (a
// value such as ToolCompletedData). It returns data itself, as a
// json.RawMessage, for a type that defines no payload or that this
// version does not know, and nil for no data.
func DecodeEventData(typ string, data json.RawMessage) (any, error) {
	if len(data) == 0 {
		return nil, nil
	}
	info, ok := EventFor(typ)
	if !ok || info.Data == nil {
		return data, nil
	}
	p := reflect.New(info.Data)
	if err := json.Unmarshal(data, p.Interface()); err != nil {
		return nil, err
	}
	return p.Elem().Interface(), nil
}

// PhaseData is the data of turn.*, reason.* and act.* events. All of it is
// optional: a started event usually carries none.
type PhaseData struct {
	// DurationMS is how long the phase took, on a completed event.
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Error says why the phase failed.
	Error string `json:"error,omitempty"`
}

// ToolStartedData is the data of tool.started.
type ToolStartedData struct {
	// Tool is the session name of the tool the agent called.
	Tool string `json:"tool"`
	// Capability names what serves it: an extension, "builtin:<name>" or
	// an MCP server.
	Capability string `json:"capability,omitempty"`
	// Extension is the serving extension's name, when an extension serves
	// it.
	Extension  string `json:"extension,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Args are the checked arguments, before any hook rewrote them.
	Args json.RawMessage `json:"args,omitempty"`
	// Narration is the line a front-end shows for the call: the tool's
	// manifest narration template filled with the arguments (secret ones
	// redacted), or the tool name. Never text a server supplied.
	Narration string `json:"narration,omitempty"`
}

// Tool call outcomes, the status of tool.completed.
const (
	ToolOK        = "ok"
	ToolError     = "tool_error" // the tool answered an error result
	ToolBlocked   = "blocked"    // a pre_tool_use hook blocked the call
	ToolDenied    = "denied"     // the user or the user's policy denied the call
	ToolTimeout   = "timeout"
	ToolCancelled = "cancelled"
	ToolFailed    = "error" // the call failed: the server, the arguments, the transport
)

// ToolCompletedData is the data of tool.completed.
type ToolCompletedData struct {
	Tool       string `json:"tool"`
	Capability string `json:"capability,omitempty"`
	Extension  string `json:"extension,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// DurationMS covers the hooks and the call.
	DurationMS float64 `json:"duration_ms"`
	// IsError is set when the call failed or its result is an error.
	IsError bool `json:"is_error"`
	// Status is one of ok, tool_error, blocked, denied, timeout,
	// cancelled, error.
	Status string `json:"status"`
	// Error is the failure's text when the call failed.
	Error string `json:"error,omitempty"`
}

// Tool approval decisions and who made them, in tool.approval.
const (
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalBlocked  = "blocked"

	ApprovalByUser   = "user"
	ApprovalByPolicy = "policy"
	ApprovalByHook   = "hook"
)

// ApprovalDecisions and ApprovalDeciders list the decisions and deciders
// of tool.approval this version defines.
var (
	ApprovalDecisions = []string{ApprovalApproved, ApprovalDenied, ApprovalBlocked}
	ApprovalDeciders  = []string{ApprovalByUser, ApprovalByPolicy, ApprovalByHook}
)

// ToolApprovalData is the data of tool.approval.
type ToolApprovalData struct {
	// Tool is the session name of the tool.
	Tool string `json:"tool"`
	// Capability serves the tool; for a hook's block it is the hook's
	// capability.
	Capability string `json:"capability,omitempty"`
	// Extension is the name of the extension serving the tool, when one
	// does.
	Extension string `json:"extension,omitempty"`
	// Version is that extension's version, when it has one.
	Version string `json:"version,omitempty"`
	// ToolCallID is the host's id of the tool call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Decision is approved or denied (the user was asked, or the user's
	// policy denied the call), or blocked (a pre_tool_use hook).
	Decision string `json:"decision"`
	// By is who decided: user (or the front-end's approver), policy or
	// hook.
	By string `json:"by"`
	// Reason says why the call was asked about, denied or blocked.
	Reason string `json:"reason,omitempty"`
}

// ToolUpdateData is the data of tool.update.
type ToolUpdateData struct {
	Tool       string `json:"tool"`
	Extension  string `json:"extension,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Output is a chunk of partial output.
	Output   string          `json:"output,omitempty"`
	Progress *Progress       `json:"progress,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// HookFiredData is the data of hook.fired.
type HookFiredData struct {
	// Event is the hook event, e.g. pre_tool_use or session_start.
	Event string `json:"event"`
	// Tool is the tool the event concerns; empty for a lifecycle event
	// that concerns none.
	Tool       string `json:"tool"`
	Capability string `json:"capability,omitempty"`
	Extension  string `json:"extension,omitempty"`
	// Decision is allow, block, mutate, or error when the hook failed.
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	Error    string `json:"error,omitempty"`
	// OnError is the subscription's policy, given when the hook failed.
	OnError    string  `json:"on_error,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// LLMGenerationData is the data of llm.generation: what the agent loop
// knows of one model generation, which a trace consumer maps to
// OpenTelemetry's GenAI attributes.
type LLMGenerationData struct {
	// Operation is the GenAI operation name; chat when empty.
	Operation     string `json:"operation,omitempty"`
	Model         string `json:"model,omitempty"`
	ResponseModel string `json:"response_model,omitempty"`
	Provider      string `json:"provider,omitempty"`
	ResponseID    string `json:"response_id,omitempty"`
	// InputTokens counts the whole prompt; CachedInputTokens the part of
	// it read from the provider's prompt cache.
	InputTokens       int64    `json:"input_tokens,omitempty"`
	CachedInputTokens int64    `json:"cached_input_tokens,omitempty"`
	OutputTokens      int64    `json:"output_tokens,omitempty"`
	FinishReasons     []string `json:"finish_reasons,omitempty"`
	DurationMS        float64  `json:"duration_ms,omitempty"`
	Error             string   `json:"error,omitempty"`
}

// HookReportData is the data of hook.report.
type HookReportData struct {
	// Hooks are the subscriptions that never fired, timed out or failed,
	// in harness order.
	Hooks []HookStats `json:"hooks"`
}

// HookStats is what came of one hook subscription in a session.
type HookStats struct {
	Event      string `json:"event"`
	Matcher    string `json:"matcher,omitempty"`
	Capability string `json:"capability"`
	Extension  string `json:"extension,omitempty"`
	// Fired counts the firings; Timeouts and Failures those that timed
	// out or failed otherwise (an error, a crash, no known decision).
	Fired    int `json:"fired"`
	Timeouts int `json:"timeouts,omitempty"`
	Failures int `json:"failures,omitempty"`
	// LastError is the last failure's error.
	LastError string `json:"last_error,omitempty"`
}

// StatusChangedData is the data of status.changed.
type StatusChangedData struct {
	Extension string `json:"extension"`
	// Text is the status to show; empty clears it.
	Text string `json:"text"`
}

// ConfigChangedData is the data of config.changed.
type ConfigChangedData struct {
	Extension string `json:"extension"`
	// Restarted says the server asked for a restart (restart-required)
	// and the host restarted it.
	Restarted bool `json:"restarted,omitempty"`
	// Error says why the new config was not applied; the old one stays.
	Error string `json:"error,omitempty"`
}

// TextDeltaData is the data of text.delta.
type TextDeltaData struct {
	Text string `json:"text"`
}

// WarningData is the data of warning.
type WarningData struct {
	Message string `json:"message"`
}

// ExtensionData is the data of extension.started, extension.degraded and
// extension.restarted.
type ExtensionData struct {
	Extension string `json:"extension"`
	// PID is the server's process id, when it runs as a process.
	PID int `json:"pid,omitempty"`
	// Error says what went wrong, on extension.degraded.
	Error string `json:"error,omitempty"`
}
