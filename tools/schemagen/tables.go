package main

import (
	"reflect"

	"yolop.dev/core/yep"
)

// The tables below hold what the Go types cannot say about the wire. Each
// entry is checked when the schema is generated (an entry that names no
// field is an error) and by the tests against the constants of core/yep.

// Required lists the fields, as "Type.json_name", that a valid message must
// carry.
//
// The rule: YEP defaults every missing field (forward compatibility), so a
// field is required only when the message means nothing without it — the
// version to negotiate, the name of what to run, the id a message addresses
// or correlates with, the text of a question or log record, the message of
// an error. A field whose zero value is a valid reading (an empty output, a
// false flag, a missing decision meaning allow) is never required, and a
// field added in a later minor version can never be required, because an
// older peer would not send it. Only a field without omitempty may be
// listed: Go must always encode it.
var Required = map[string]bool{
	"Error.message":                         true,
	"InitializeParams.protocol_version":     true,
	"InitializeResult.protocol_version":     true,
	"ToolDecl.name":                         true,
	"HookSubscription.event":                true,
	"MCPServerDecl.name":                    true,
	"CommandDecl.name":                      true,
	"ProviderParams.baseUrl":                true,
	"ProviderParams.models":                 true,
	"ToolCallParams.name":                   true,
	"ToolUpdateParams.request_id":           true,
	"CancelParams.id":                       true,
	"HookFireParams.event":                  true,
	"HookFireParams.toolName":               true,
	"TraceEventParams.type":                 true,
	"ConfigChangedParams.config":            true,
	"WorkspaceChangedParams.workspace_root": true,
	"UIAskParams.prompt":                    true,
	"LogParams.message":                     true,
	"CommandExecuteParams.name":             true,
}

// An Enum is a closed vocabulary: a value outside it is invalid. ConstPrefix
// names the core/yep constants that define it; a test checks the values
// are exactly the string constants with that prefix.
type Enum struct {
	ConstPrefix string
	Values      []string
}

// Enums maps "Type.json_name" to the closed vocabulary of a string field.
var Enums = map[string]Enum{
	"HookFireResult.decision":    {"Decision", []string{yep.DecisionAllow, yep.DecisionBlock, yep.DecisionMutate}},
	"ConfigChangedResult.status": {"Config", []string{yep.ConfigOK, yep.ConfigRestartRequired}},
	"LogParams.level":            {"Log", []string{yep.LogTrace, yep.LogDebug, yep.LogInfo, yep.LogWarn, yep.LogError}},
}

// Known maps "Type.json_name" to the values an open vocabulary defines in
// this version; they are listed in the description, and any other value is
// valid (a peer ignores what it does not know).
var Known = map[string][]string{
	"HookFireParams.event":      yep.HookEvents,
	"HookSubscription.event":    yep.HookEvents,
	"TraceEventParams.type":     yep.TraceEventTypes,
	"ToolApprovalData.decision": yep.ApprovalDecisions,
	"ToolApprovalData.by":       yep.ApprovalDeciders,
}

// RawAs maps "Type.json_name" of a json.RawMessage field to the type its
// bytes hold, when the protocol fixes one.
var RawAs = map[string]reflect.Type{
	"HookFireParams.payload": reflect.TypeFor[yep.HookPayload](),
}

// A TokenParams gives the shape of one capability token's params.
type TokenParams struct {
	Token string
	Type  reflect.Type
	// List says the params are an array of Type.
	List bool
	Doc  string
}

// CapabilityParamShapes lists the capability tokens whose params have a
// fixed shape (see yep.InitializeResult.CapabilityParams). The shape is the
// same whichever peer sends the token.
var CapabilityParamShapes = []TokenParams{
	{yep.CapTools, reflect.TypeFor[yep.ToolDecl](), true, "The tools the server serves, a subset of the manifest's."},
	{yep.CapPrompt, reflect.TypeFor[yep.PromptDecl](), false, "The server's system-prompt contribution."},
	{yep.CapHooks, reflect.TypeFor[yep.HookSubscription](), true, "The server's hook subscriptions, a subset of the manifest's."},
	{yep.CapMCPServers, reflect.TypeFor[yep.MCPServerDecl](), true, "The MCP servers the extension provides, clamped by name and transport shape."},
	{yep.CapCommands, reflect.TypeFor[yep.CommandDecl](), true, "The slash commands the server answers."},
	{yep.CapProvider, reflect.TypeFor[yep.ProviderParams](), false, "The OpenAI-compatible endpoint the server hosts on loopback, offered as a model provider; clamped by the manifest's provider facet."},
}

// An ErrorCode names one error code for meta.json.
type ErrorCode struct {
	Name  string
	Const string // the core/yep constant, checked by a test
	Code  int64
}

// ErrorCodes lists the error codes of core/yep/errors.go.
var ErrorCodes = []ErrorCode{
	{"unclassified", "CodeUnclassified", yep.CodeUnclassified},
	{"parse_error", "CodeParseError", yep.CodeParseError},
	{"invalid_request", "CodeInvalidRequest", yep.CodeInvalidRequest},
	{"method_not_found", "CodeMethodNotFound", yep.CodeMethodNotFound},
	{"invalid_params", "CodeInvalidParams", yep.CodeInvalidParams},
	{"internal_error", "CodeInternalError", yep.CodeInternalError},
	{"overloaded", "CodeOverloaded", yep.CodeOverloaded},
	{"message_too_large", "CodeMessageTooLarge", yep.CodeMessageTooLarge},
	{"not_initialized", "CodeNotInitialized", yep.CodeNotInitialized},
	{"not_permitted", "CodeNotPermitted", yep.CodeNotPermitted},
	{"cancelled", "CodeCancelled", yep.CodeCancelled},
}

// FallbackDocs describes fields, as "Type.json_name", whose Go field has no
// doc comment in core/yep. A doc comment in core/yep always wins; move a
// line from here into core/yep when touching its type.
var FallbackDocs = map[string]string{
	"InitializeResult.protocol_version":     "The server's version, MAJOR.MINOR; the major must equal the host's.",
	"InitializeResult.name":                 "The server's name, for logs and /extensions list.",
	"InitializeResult.version":              "The server's own version, for logs.",
	"ToolDecl.name":                         "A tool the server serves; it must be approved by the manifest.",
	"MCPServerDecl.name":                    "The MCP server's name, clamped against the manifest.",
	"MCPServerDecl.command":                 "The command of a stdio server.",
	"MCPServerDecl.args":                    "The arguments of a stdio server.",
	"MCPServerDecl.env":                     "Extra environment of a stdio server.",
	"MCPServerDecl.url":                     "The endpoint of an http server.",
	"CommandDecl.name":                      "The slash command's name, without the slash.",
	"CommandDecl.description":               "One line shown in the command list.",
	"ToolCallParams.tool_call_id":           "The host's id of this tool call, for narration and logs; not the JSON-RPC id.",
	"ToolCallParams.name":                   "The tool to run: one the server declared in the handshake.",
	"ToolCallParams.args":                   "The tool's arguments, any JSON, validated by the host against the manifest's input schema.",
	"ToolCallParams.session_id":             "The session the call belongs to.",
	"ToolUpdateParams.request_id":           "The JSON-RPC id of the tool/call request this update belongs to, exactly as received.",
	"ToolUpdateParams.tool_call_id":         "The tool_call_id of the call, when known.",
	"ToolUpdateParams.data":                 "Optional structured progress data.",
	"Progress.current":                      "Units done so far.",
	"Progress.total":                        "Units in all; 0 when unknown.",
	"Progress.message":                      "A short progress message.",
	"CancelParams.id":                       "The id of the request to abort, in the canceller's own id space.",
	"CancelResult.cancelled":                "True when the request was in flight and is now aborted; false (benign) when it was unknown or already answered.",
	"PromptContributionParams.turn":         "The turn number, from 1.",
	"PromptContributionResult.text":         "The text to add to this turn's system prompt; empty adds nothing.",
	"HookPayload.tool_call_id":              "The host's id of the tool call the hook concerns.",
	"HookPayload.args":                      "The call's arguments.",
	"HookPayload.result":                    "The call's result (post_tool_use only).",
	"PromptContributionParams.session_id":   "The session the turn belongs to.",
	"TraceEventParams.session_id":           "The session the event belongs to.",
	"TraceEventParams.turn_id":              "The turn the event belongs to.",
	"TraceEventParams.data":                 "The event's data. For an event type this version defines with a payload it has that payload's shape (the if/then branches of allOf, one per type); for any other type it is any JSON, carried verbatim.",
	"TraceEventParams.span_id":              "The id of this event's span.",
	"TraceEventParams.parent_id":            "The id of the parent span.",
	"ConfigChangedParams.config":            "The new validated, non-secret config, shaped like initialize's config.",
	"ConfigChangedResult.status":            "ok (applied; the default) or restart-required.",
	"WorkspaceChangedParams.workspace_root": "The new active workspace directory.",
	"UIAskParams.prompt":                    "The question shown to the user.",
	"UIAskParams.placeholder":               "Hint text shown in an empty input.",
	"UIAskResult.answer":                    "The user's answer; empty when cancelled.",
	"UIAskResult.cancelled":                 "True when the user dismissed the question.",
	"StatusChangedParams.text":              "The status text; empty clears it.",
	"LogParams.level":                       "The record's level.",
	"LogParams.message":                     "The log message.",
	"LogParams.fields":                      "Extra structured key/values, an object.",
	"CommandExecuteParams.name":             "The command to run: one the server declared.",
	"CommandExecuteParams.arguments":        "The rest of the command line, unparsed.",
	"CommandExecuteResult.success":          "Whether the command succeeded.",
	"CommandExecuteResult.message":          "A message shown to the user.",
	"ToolStartedData.tool_call_id":          "The host's id of the tool call.",
	"ToolCompletedData.tool":                "The session name of the tool the agent called.",
	"ToolCompletedData.capability":          "What served it: an extension, \"builtin:<name>\" or an MCP server.",
	"ToolCompletedData.extension":           "The serving extension's name, when an extension serves it.",
	"ToolCompletedData.tool_call_id":        "The host's id of the tool call.",
	"ToolUpdateData.tool":                   "The session name of the tool whose call streamed the update.",
	"ToolUpdateData.extension":              "The serving extension's name, when an extension serves it.",
	"ToolUpdateData.tool_call_id":           "The host's id of the tool call.",
	"ToolUpdateData.progress":               "A progress report.",
	"ToolUpdateData.data":                   "Structured progress data, carried verbatim.",
	"HookFiredData.tool":                    "The session name of the tool the hook fired for.",
	"HookFiredData.capability":              "What serves the tool: an extension, \"builtin:<name>\" or an MCP server.",
	"HookFiredData.extension":               "The extension whose hook fired.",
	"HookFiredData.reason":                  "The hook's reason for a block or a mutation.",
	"HookFiredData.error":                   "Why the hook failed, with decision error.",
	"HookFiredData.duration_ms":             "How long the hook took.",
	"LLMGenerationData.model":               "The model asked (gen_ai.request.model).",
	"LLMGenerationData.response_model":      "The model that answered (gen_ai.response.model).",
	"LLMGenerationData.provider":            "The model's provider (gen_ai.provider.name).",
	"LLMGenerationData.response_id":         "The provider's id of the response.",
	"LLMGenerationData.input_tokens":        "Tokens of the prompt.",
	"LLMGenerationData.output_tokens":       "Tokens of the answer.",
	"LLMGenerationData.finish_reasons":      "Why the generation stopped, per choice.",
	"LLMGenerationData.duration_ms":         "How long the generation took; it ended at the event's timestamp.",
	"LLMGenerationData.error":               "Why the generation failed.",
	"StatusChangedData.extension":           "The extension whose status changed.",
	"ConfigChangedData.extension":           "The extension whose config changed.",
	"WarningData.message":                   "The warning, for the user.",
	"ExtensionData.extension":               "The extension's name.",
	"Error.code":                            "An integer, JSON-RPC conventions; 0 (the default) means unclassified.",
	"Error.message":                         "What went wrong, for people.",
	"Error.retryable":                       "A hint that the same request may succeed later.",
	"Error.data":                            "Any structured detail.",
}
