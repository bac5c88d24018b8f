package yep

import "reflect"

// Method names.
const (
	MethodInitialize         = "initialize"
	MethodInitialized        = "initialized"
	MethodToolCall           = "tool/call"
	MethodToolUpdate         = "tool/update"
	MethodCancel             = "cancel"
	MethodPromptContribution = "prompt/contribution"
	MethodHookFire           = "hook/fire"
	MethodTraceEvent         = "trace/event"
	MethodConfigChanged      = "config/changed"
	MethodWorkspaceChanged   = "workspace/changed"
	MethodUIAsk              = "ui/ask"
	MethodStatusChanged      = "status/changed"
	MethodLog                = "log"
	MethodCommandExecute     = "command/execute"
	MethodShutdown           = "shutdown"
	MethodExit               = "exit"
)

// Direction says which peer sends a method.
type Direction string

const (
	ToServer Direction = "host_to_server"
	ToHost   Direction = "server_to_host"
	Both     Direction = "both"
)

// Kind says whether a method is a request (answered) or a notification.
type Kind string

const (
	Request      Kind = "request"
	Notification Kind = "notification"
)

// A MethodInfo describes one method of the protocol.
type MethodInfo struct {
	Name      string
	Direction Direction
	Kind      Kind
	// Capability is the token that gates the method: a peer never sends a
	// gated method unless the other side advertised the token. Empty means
	// always allowed.
	Capability string
	// Params and Result are the payload types (Result is nil for a
	// notification).
	Params, Result reflect.Type
	// Doc is a one-line description.
	Doc string
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// Methods lists every method of the protocol, in a stable order.
var Methods = []MethodInfo{
	{MethodInitialize, ToServer, Request, "", typeOf[InitializeParams](), typeOf[InitializeResult](), "Open the handshake: versions, session, workspace, config, features."},
	{MethodInitialized, ToServer, Notification, "", typeOf[InitializedParams](), nil, "The handshake is complete."},
	{MethodToolCall, ToServer, Request, CapTools, typeOf[ToolCallParams](), typeOf[ToolResult](), "Run one tool; the result is final."},
	{MethodToolUpdate, ToHost, Notification, CapStreaming, typeOf[ToolUpdateParams](), nil, "Stream progress or partial output of a running tool call."},
	{MethodCancel, Both, Request, CapCancel, typeOf[CancelParams](), typeOf[CancelResult](), "Abort an in-flight request by id."},
	{MethodPromptContribution, ToServer, Request, CapDynamicPrompt, typeOf[PromptContributionParams](), typeOf[PromptContributionResult](), "Compute this turn's system-prompt contribution."},
	{MethodHookFire, ToServer, Request, CapHooks, typeOf[HookFireParams](), typeOf[HookFireResult](), "Fire one hook subscription; answer allow, block or mutate."},
	{MethodTraceEvent, ToServer, Notification, CapTrace, typeOf[TraceEventParams](), nil, "Forward one agentic-lifecycle event; never awaited."},
	{MethodConfigChanged, ToServer, Request, CapConfig, typeOf[ConfigChangedParams](), typeOf[ConfigChangedResult](), "Push a new validated config; answer ok or restart-required."},
	{MethodWorkspaceChanged, ToServer, Notification, "", typeOf[WorkspaceChangedParams](), nil, "The active workspace root changed."},
	{MethodUIAsk, ToHost, Request, CapUIAsk, typeOf[UIAskParams](), typeOf[UIAskResult](), "Ask the user a question."},
	{MethodStatusChanged, ToHost, Notification, CapStatus, typeOf[StatusChangedParams](), nil, "Set the extension's status text; empty clears it."},
	{MethodLog, ToHost, Notification, CapLog, typeOf[LogParams](), nil, "One structured log record."},
	{MethodCommandExecute, ToServer, Request, CapCommands, typeOf[CommandExecuteParams](), typeOf[CommandExecuteResult](), "Run a slash command."},
	{MethodShutdown, ToServer, Request, "", typeOf[ShutdownParams](), typeOf[ShutdownResult](), "Stop gracefully; exit follows."},
	{MethodExit, ToServer, Notification, "", typeOf[ExitParams](), nil, "Exit now."},
}

// Method returns the description of name.
func Method(name string) (MethodInfo, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return MethodInfo{}, false
}
