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
