package yep

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"yolop.dev/core/internal/jsonfuzz"
)

var toolResultSeeds = []string{
	`{"output":"hello"}`,
	`{"output":"hi","is_error":true,"data":{"n":[1,2,{"s":"}"}]}}`,
	`{}`,
	`null`,
	`"str"`,
	`[1]`,
	` { "output" : "spaced" , "is_error" : false } `,
	`{"output":"esc \" \\ \u00e9 \n"}`,
	`{"output":"ünïcödé ✓"}`,
	`{"output":null,"is_error":null,"data":null}`,
	`{"output":1}`,
	`{"is_error":"yes"}`,
	`{"output":"a","output":"b"}`,
	`{"output":"a","output":"b\u0041"}`,
	`{"data":1,"data":{"x":2}}`,
	`{"Output":"upper"}`,
	`{"IS_ERROR":true}`,
	"{\"i\u017f_error\":true}",
	`{"output":"x","extra":{"deep":[[["y"]]]},"more":null}`,
	`{"output":"` + strings.Repeat("x", 2000) + `"}`,
	`{"output":"\ud83d\ude00"}`,
}

// TestToolResultDecodeMatchesEncodingJSON checks the hand-written decoder
// against encoding/json on valid inputs.
func TestToolResultDecodeMatchesEncodingJSON(t *testing.T) {
	for _, in := range toolResultSeeds {
		checkToolResult(t, []byte(in))
	}
	// The fast path is taken for the common shape (not only the fallback).
	var r ToolResult
	if !fastToolResult([]byte(`{"output":"plain","is_error":true,"data":[1]}`), &r) || r.Output != "plain" || !r.IsError || string(r.Data) != "[1]" {
		t.Fatalf("the common shape missed the fast path: %+v", r)
	}
	if fastToolResult([]byte(`{"output":"esc\n"}`), &r) || r.Output != "plain" {
		t.Fatal("an escaped output took the fast path, or a refused input changed the result")
	}
}

func FuzzToolResultDecode(f *testing.F) { jsonfuzz.Valid(f, toolResultSeeds, checkToolResult) }

func checkToolResult(t *testing.T, in []byte) {
	t.Helper()
	// Start from a filled value: fields the input does not set must be
	// left alone, as json.Unmarshal leaves them.
	checkDecode(t, in, func() ToolResult {
		return ToolResult{Output: "before", IsError: true, Data: json.RawMessage(`"before"`)}
	})
}

var hookResultSeeds = []string{
	`{"decision":"allow"}`,
	`{"decision":"block","reason":"no"}`,
	`{"decision":"mutate","args":{"text":"x"},"reason":"r"}`,
	`{"decision":"mutate","result":{"output":"replaced"}}`,
	`{}`,
	`null`,
	`[1]`,
	` { "decision" : "allow" , "args" : [ 1 ] } `,
	`{"decision":"esc\n"}`,
	`{"decision":null,"reason":null,"args":null}`,
	`{"decision":1}`,
	`{"reason":true}`,
	`{"decision":"a","decision":"b"}`,
	`{"Decision":"upper"}`,
	`{"RESULT":{"output":"x"}}`,
	"{\"rea\u017fon\":\"folded\"}",
	`{"decision":"allow","extra":{"deep":[[["y"]]]}}`,
	`{"reason":"ünïcödé ✓"}`,
}

// TestHookResultDecodeMatchesEncodingJSON checks the hand-written decoder
// against encoding/json on valid inputs.
func TestHookResultDecodeMatchesEncodingJSON(t *testing.T) {
	for _, in := range hookResultSeeds {
		checkHookResult(t, []byte(in))
	}
	var r HookFireResult
	if !fastHookResult([]byte(`{"decision":"mutate","reason":"why","args":{"a":1}}`), &r) || r.Decision != "mutate" || r.Reason != "why" || string(r.Args) != `{"a":1}` {
		t.Fatalf("the common shape missed the fast path: %+v", r)
	}
	if fastHookResult([]byte(`{"decision":"block","result":{"output":"x"}}`), &r) || r.Decision != "mutate" {
		t.Fatal("a result took the fast path, or a refused input changed the decision")
	}
}

func FuzzHookResultDecode(f *testing.F) { jsonfuzz.Valid(f, hookResultSeeds, checkHookResult) }

var hookParamsSeeds = []string{
	`{"event":"pre_tool_use","toolName":"echo","matcher":"*","payload":{"args":{"text":"hello"}}}`,
	`{"event":"post_tool_use","toolName":"x","payload":{"tool_call_id":"c1","args":{},"result":{"output":"o"}},"traceparent":"00-a-b-01","tracestate":"k=v"}`,
	`{"toolname":"lower"}`,
	`{"TOOLNAME":"upper","Event":"e"}`,
	`{"event":"esc\t","toolName":null,"payload":null}`,
	`{"event":1}`,
	`{"event":"a","event":"b","payload":1,"payload":[2]}`,
	`null`,
	`[]`,
	`{"extra":{"x":[1]},"matcher":"m"}`,
	"{\"\u017fvent\":\"folded\"}",
}

var hookPayloadSeeds = []string{
	`{"args":{"text":"hello"}}`,
	`{"tool_call_id":"c1","args":[1],"result":{"output":"o","is_error":true}}`,
	`{"tool_call_id":"esc\n"}`,
	`{"tool_call_id":null,"args":null,"result":null}`,
	`{"TOOL_CALL_ID":"upper"}`,
	`{"tool_call_id":5}`,
	`null`,
	`"s"`,
	`{"other":{"args":1}}`,
}

func TestHookParamsDecodeMatchesEncodingJSON(t *testing.T) {
	for _, in := range hookParamsSeeds {
		checkHookParams(t, []byte(in))
	}
	for _, in := range hookPayloadSeeds {
		checkHookPayload(t, []byte(in))
	}
}

func FuzzHookParamsDecode(f *testing.F)  { jsonfuzz.Valid(f, hookParamsSeeds, checkHookParams) }
func FuzzHookPayloadDecode(f *testing.F) { jsonfuzz.Valid(f, hookPayloadSeeds, checkHookPayload) }

// checkDecode checks (*T).UnmarshalValidJSON against json.Unmarshal, both
// starting from a copy of start so that fields the input leaves alone are
// compared too.
func checkDecode[T any, PT interface {
	*T
	UnmarshalValidJSON([]byte) error
}](t *testing.T, in []byte, start func() T) {
	t.Helper()
	want, got := start(), start()
	wantErr := json.Unmarshal(in, &want)
	gotErr := PT(&got).UnmarshalValidJSON(in)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: err = %v, encoding/json: %v", in, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", in, got, want)
	}
}

func checkHookResult(t *testing.T, in []byte) {
	t.Helper()
	checkDecode(t, in, func() HookFireResult {
		return HookFireResult{Decision: "before", Reason: "before", Args: json.RawMessage(`"before"`), Result: &ToolResult{Output: "before"}}
	})
}

func checkHookParams(t *testing.T, in []byte) {
	t.Helper()
	checkDecode(t, in, func() HookFireParams {
		return HookFireParams{Event: "e0", ToolName: "t0", Matcher: "m0", Payload: json.RawMessage(`"p0"`), TraceParent: "tp0", TraceState: "ts0"}
	})
}

func checkHookPayload(t *testing.T, in []byte) {
	t.Helper()
	checkDecode(t, in, func() HookPayload {
		return HookPayload{ToolCallID: "c0", Args: json.RawMessage(`"a0"`), Result: &ToolResult{Output: "r0"}}
	})
}
