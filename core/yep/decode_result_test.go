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
	start := ToolResult{Output: "before", IsError: true, Data: json.RawMessage(`"before"`)}
	want, got := start, start
	want.Data, got.Data = append(json.RawMessage(nil), start.Data...), append(json.RawMessage(nil), start.Data...)
	wantErr := json.Unmarshal(in, &want)
	gotErr := got.UnmarshalValidJSON(in)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: err = %v, encoding/json: %v", in, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v (data %s)\nwant %+v (data %s)", in, got, got.Data, want, want.Data)
	}
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

func checkHookResult(t *testing.T, in []byte) {
	t.Helper()
	start := HookFireResult{Decision: "before", Reason: "before", Args: json.RawMessage(`"before"`), Result: &ToolResult{Output: "before"}}
	clone := func(r HookFireResult) HookFireResult {
		r.Args = append(json.RawMessage(nil), r.Args...)
		res := *r.Result
		r.Result = &res
		return r
	}
	want, got := clone(start), clone(start)
	wantErr := json.Unmarshal(in, &want)
	gotErr := got.UnmarshalValidJSON(in)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: err = %v, encoding/json: %v", in, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", in, got, want)
	}
}

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

func checkHookParams(t *testing.T, in []byte) {
	t.Helper()
	start := HookFireParams{Event: "e0", ToolName: "t0", Matcher: "m0", Payload: json.RawMessage(`"p0"`), TraceParent: "tp0", TraceState: "ts0"}
	want, got := start, start
	want.Payload, got.Payload = append(json.RawMessage(nil), start.Payload...), append(json.RawMessage(nil), start.Payload...)
	wantErr := json.Unmarshal(in, &want)
	gotErr := got.UnmarshalValidJSON(in)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: err = %v, encoding/json: %v", in, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", in, got, want)
	}
}

func checkHookPayload(t *testing.T, in []byte) {
	t.Helper()
	start := HookPayload{ToolCallID: "c0", Args: json.RawMessage(`"a0"`), Result: &ToolResult{Output: "r0"}}
	clone := func(p HookPayload) HookPayload {
		p.Args = append(json.RawMessage(nil), p.Args...)
		r := *p.Result
		p.Result = &r
		return p
	}
	want, got := clone(start), clone(start)
	wantErr := json.Unmarshal(in, &want)
	gotErr := got.UnmarshalValidJSON(in)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: err = %v, encoding/json: %v", in, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", in, got, want)
	}
}
