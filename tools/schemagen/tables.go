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
	"HookFireParams.event":   yep.HookEvents,
	"HookSubscription.event": yep.HookEvents,
	"TraceEventParams.type":  yep.TraceEventTypes,
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
}

// CapabilityParamShapes lists the capability tokens whose params have a
// fixed shape (see yep.InitializeResult.CapabilityParams). The shape is the
// same whichever peer sends the token.
var CapabilityParamShapes = []TokenParams{
	{yep.CapTools, reflect.TypeFor[yep.ToolDecl](), true},
	{yep.CapPrompt, reflect.TypeFor[yep.PromptDecl](), false},
	{yep.CapHooks, reflect.TypeFor[yep.HookSubscription](), true},
	{yep.CapMCPServers, reflect.TypeFor[yep.MCPServerDecl](), true},
	{yep.CapCommands, reflect.TypeFor[yep.CommandDecl](), true},
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
