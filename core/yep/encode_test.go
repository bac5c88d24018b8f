package yep

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// marshalParams is what AppendJSON must match: encoding/json with HTML
// escaping off, as core/jsonrpc's encoder runs.
func marshalParams(p any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checkAppend checks v.AppendJSON against encoding/json: the same bytes,
// or an error where it errs, leaving the buffer as it was.
func checkAppend[T interface{ AppendJSON([]byte) ([]byte, error) }](t *testing.T, v T) {
	t.Helper()
	want, werr := marshalParams(v)
	got, gerr := v.AppendJSON([]byte("prefix"))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("AppendJSON(%+v) error %v, encoding/json's %v", v, gerr, werr)
	}
	if werr != nil {
		if string(got) != "prefix" {
			t.Fatalf("AppendJSON(%+v) failed but changed the buffer to %q", v, got)
		}
		return
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendJSON(%+v) = %s\nencoding/json gives %s", v, got[len("prefix"):], want)
	}
}

var paramSeeds = []ToolCallParams{
	{Name: "echo", Args: json.RawMessage(`{"text":"hi"}`)},
	{Name: "echo"},
	{ToolCallID: "call-1", Name: "grep", Args: json.RawMessage(`{"q":"<a> & \"b\"","n":[1, 2]}`), SessionID: "s", TraceParent: "00-0123-4567-01", TraceState: "k=v"},
	{Name: "ünï \u2028 \xff", Args: json.RawMessage(" {\n\t\"spaced\" : true }\n")},
	{Name: "bad", Args: json.RawMessage(`{"unterminated":`)},
	{Name: "long", Args: json.RawMessage(`{"text":"` + strings.Repeat("lorem ipsum ", 90) + `"}`)},
}

func TestToolCallParamsAppendJSON(t *testing.T) {
	for _, p := range paramSeeds {
		checkAppend(t, p)
	}
}

func FuzzToolCallParamsAppendJSON(f *testing.F) {
	for _, p := range paramSeeds {
		f.Add(p.ToolCallID, p.Name, []byte(p.Args), p.SessionID, p.TraceParent)
	}
	f.Fuzz(func(t *testing.T, id, name string, args []byte, session, traceParent string) {
		checkAppend(t, ToolCallParams{ToolCallID: id, Name: name, Args: args, SessionID: session, TraceParent: traceParent})
	})
}

var hookParamSeeds = []HookFireParams{
	{Event: HookPreToolUse, ToolName: "echo", Matcher: "*", Payload: json.RawMessage(`{"args":{"text":"hello"}}`)},
	{Event: HookPostToolUse, ToolName: "bash"},
	{Event: "e", ToolName: "t <&> \u2028", Payload: json.RawMessage(" {\n \"args\" : [1, 2] }"), TraceParent: "00-ab-cd-01", TraceState: "k=v"},
	{Event: "\xff", ToolName: "x", Payload: json.RawMessage(`null`)},
	{Event: "bad", ToolName: "x", Payload: json.RawMessage(`{"args":`)},
	{Event: "big", ToolName: "x", Payload: json.RawMessage(`{"args":{"text":"` + strings.Repeat("lorem ", 300) + `"}}`)},
}

func TestHookFireParamsAppendJSON(t *testing.T) {
	for _, p := range hookParamSeeds {
		checkAppend(t, p)
	}
}

func FuzzHookFireParamsAppendJSON(f *testing.F) {
	for _, p := range hookParamSeeds {
		f.Add(p.Event, p.ToolName, p.Matcher, []byte(p.Payload), p.TraceParent)
	}
	f.Fuzz(func(t *testing.T, event, tool, matcher string, payload []byte, traceParent string) {
		checkAppend(t, HookFireParams{Event: event, ToolName: tool, Matcher: matcher, Payload: payload, TraceParent: traceParent, TraceState: matcher})
	})
}

var hookResultEncodeSeeds = []HookFireResult{
	{Decision: DecisionAllow},
	{},
	{Decision: DecisionBlock, Reason: "no <way> & \u2028 \xff"},
	{Reason: "only a reason"},
	{Args: json.RawMessage(" { \"a\" : 1 } ")},
	{Decision: DecisionMutate, Args: json.RawMessage(`{"text":"x"}`), Result: &ToolResult{Output: "<o>", Data: json.RawMessage(`[1]`)}},
	{Decision: DecisionMutate, Args: json.RawMessage(`{"bad":`)},
}

func TestHookFireResultAppendJSON(t *testing.T) {
	for _, r := range hookResultEncodeSeeds {
		checkAppend(t, r)
	}
}

func FuzzHookFireResultAppendJSON(f *testing.F) {
	for _, r := range hookResultEncodeSeeds {
		f.Add(r.Decision, r.Reason, []byte(r.Args), r.Result != nil)
	}
	f.Fuzz(func(t *testing.T, decision, reason string, args []byte, withResult bool) {
		r := HookFireResult{Decision: decision, Reason: reason, Args: args}
		if withResult {
			r.Result = &ToolResult{Output: reason, Data: args}
		}
		checkAppend(t, r)
	})
}

var initializeParamSeeds = []InitializeParams{
	{ProtocolVersion: "1.0", SessionID: "s-1", WorkspaceRoot: "/work <&>", Locale: "en-US",
		Capabilities: Capabilities{CapTools, CapStreaming, CapHooks, CapPrompt, CapLog}},
	{},
	{ProtocolVersion: "1.0", Config: json.RawMessage(" {\n \"k\" : [1, \"\u2028\"] }"), Capabilities: Capabilities{}},
	{ProtocolVersion: "\xff", Capabilities: Capabilities{"", "a\"b"}},
	{ProtocolVersion: "1.0", Config: json.RawMessage(`{"bad":`)},
	{ProtocolVersion: "1.0", Config: json.RawMessage(`null`)},
	{ProtocolVersion: "1.0", CapabilityParams: CapabilityParams{"z": json.RawMessage(`1`), "a": json.RawMessage(` [ 2 ] `)}},
}

func TestInitializeParamsAppendJSON(t *testing.T) {
	for _, p := range initializeParamSeeds {
		checkAppend(t, p)
	}
	checkAppend(t, InitializedParams{})
}

func FuzzInitializeParamsAppendJSON(f *testing.F) {
	for _, p := range initializeParamSeeds {
		f.Add(p.ProtocolVersion, p.SessionID, p.WorkspaceRoot, []byte(p.Config), strings.Join(p.Capabilities, ","), len(p.CapabilityParams) > 0)
	}
	f.Fuzz(func(t *testing.T, version, session, root string, config []byte, caps string, withParams bool) {
		p := InitializeParams{ProtocolVersion: version, SessionID: session, WorkspaceRoot: root, Locale: session, Config: config}
		if caps != "" {
			p.Capabilities = strings.Split(caps, ",")
		}
		if withParams {
			p.CapabilityParams = CapabilityParams{root: config}
		}
		checkAppend(t, p)
	})
}
