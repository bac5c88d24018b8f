package sdk

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"yolop.dev/core/internal/jsonfuzz"
	"yolop.dev/core/yep"
)

var toolCallSeeds = []string{
	`{"tool_call_id":"t1","name":"echo","args":{"text":"hi"}}`,
	`{"name":"echo"}`,
	`{}`,
	`null`,
	` { "name" : "a" , "args" : [1,{"x":"}"}] , "session_id":"s" } `,
	`{"name":"e\"cho","args":null}`,
	`{"name":"a","name":"b"}`,
	`{"NAME":"upper","Args":{"a":1}}`,
	`{"Tool_Call_ID":"x"}`,
	`{"name":1}`,
	`{"name":null,"tool_call_id":"t"}`,
	`{"args":"string args","extra":{"deep":[[["x"]]]},"name":"n"}`,
	`{"name":"\u00e9","args":{"s":"\\"}}`,
	`{"name":"ünï","args":true}`,
	`[1,2]`,
	`"str"`,
	`{"args":{"a":1},"args":{"b":2}}`,
	`{"name":"echo","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"}`,
	`{"name":"echo","traceparent":"a","traceparent":"b"}`,
	`{"name":"echo","traceparent":null,"tracestate":7}`,
	`{"name":"echo","TraceParent":"00-x"}`,
	// encoding/json folds U+017F (ſ) to s and U+212A (K) to k as well.
	"{\"name\":\"echo\",\"ſeſſion_id\":\"folded\"}",
	"{\"name\":\"echo\",\"traceſtate\":\"k=v\"}",
}

// TestDecodeToolCallMatchesEncodingJSON checks the hand-written decoder
// against encoding/json on valid inputs.
func TestDecodeToolCallMatchesEncodingJSON(t *testing.T) {
	for _, in := range toolCallSeeds {
		checkDecode(t, []byte(in))
	}
}

func FuzzDecodeToolCall(f *testing.F) { jsonfuzz.Valid(f, toolCallSeeds, checkDecode) }

func checkDecode(t *testing.T, in []byte) {
	t.Helper()
	var want yep.ToolCallParams
	wantErr := json.Unmarshal(in, &want)
	var got yep.ToolCallParams
	gotErr := decodeToolCall(in, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: err = %v, encoding/json: %v", in, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	// encoding/json keeps args as written, null included; the SDK drops a
	// null.
	if string(want.Args) == "null" {
		want.Args = nil
	}
	if !reflect.DeepEqual(got, want) && !(len(got.Args) == 0 && len(want.Args) == 0 && got.Name == want.Name && got.ToolCallID == want.ToolCallID && got.SessionID == want.SessionID) {
		t.Fatalf("%s:\n got %+v (args %s)\nwant %+v (args %s)", in, got, got.Args, want, want.Args)
	}
}

var resultSeeds = []string{"", "hello", "quote \" back \\ slash", "ctl \x00\x01\x1f\t\n\r\b\f", "html <&>", "ünïcödé ✓ 🎉", "bad \xff utf8 \xc3", "line\u2028sep\u2029", strings.Repeat("x", 300)}

func TestEncodeToolResultMatchesEncodingJSON(t *testing.T) {
	for _, s := range resultSeeds {
		for _, r := range []yep.ToolResult{
			{Output: s},
			{Output: s, IsError: true},
			{Output: s, Data: json.RawMessage(`{"k":[1,2]}`)},
		} {
			checkEncode(t, r)
		}
	}
	// Invalid data is reported, not sent.
	got := encodeToolResult(yep.ToolResult{Output: "x", Data: json.RawMessage(`{bad`)})
	if !json.Valid(got) || !strings.Contains(string(got), "invalid data") {
		t.Errorf("invalid data encoded as %s", got)
	}
}

func FuzzEncodeToolResult(f *testing.F) {
	for _, s := range resultSeeds {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, isErr bool) {
		checkEncode(t, yep.ToolResult{Output: s, IsError: isErr})
	})
}

func checkEncode(t *testing.T, r yep.ToolResult) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	got := encodeToolResult(r)
	if string(got) != strings.TrimSuffix(want.String(), "\n") {
		t.Fatalf("%q:\n got %s\nwant %s", r.Output, got, want.String())
	}
}
