package yep

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"yolop.dev/core/internal/jsonfuzz"
)

var initializeResultSeeds = []string{
	`{"protocol_version":"1.0","name":"echo","version":"0.1.0","capabilities":["tools","streaming","hooks","prompt","commands","cancel"],"capability_params":{"commands":[{"name":"greet","description":"Greet someone: /echo:greet <name>"}],"hooks":[{"event":"pre_tool_use","matcher":"*"}],"prompt":{"static":"text"},"tools":[{"name":"echo"},{"name":"count"}]}}`,
	`{}`,
	`null`,
	`[]`,
	`"str"`,
	`{"protocol_version":"1.0","capabilities":[],"capability_params":{}}`,
	`{"capabilities":null,"capability_params":null,"name":null}`,
	`{"capabilities":["a"],"capabilities":["b","c"]}`,
	`{"capabilities":["a"],"capabilities":null}`,
	`{"capability_params":{"a":1},"capability_params":{"b":2}}`,
	`{"capability_params":{"a":1,"a":{"x":[2]}}}`,
	`{"capability_params":{"é":true,"\u0041":1}}`,
	`{"capability_params":[1]}`,
	`{"capability_params":{"tools": [ {"name" : "x"} ] , "z" : null }}`,
	`{"capabilities":["a",null]}`,
	`{"capabilities":["esc\n"]}`,
	`{"capabilities":[1]}`,
	`{"capabilities":"tools"}`,
	`{"Name":"upper","VERSION":"v"}`,
	"{\"protocol_ver\u017fion\":\"2.0\"}",
	`{"protocol_version":"esc\"aped","extra":{"deep":[[["y"]]]}}`,
	` { "name" : "spaced" , "version" : "1" } `,
	`{"name":1}`,
}

// TestInitializeResultDecodeMatchesEncodingJSON checks the hand-written
// decoder against encoding/json on valid inputs, and that the common
// shape takes it.
func TestInitializeResultDecodeMatchesEncodingJSON(t *testing.T) {
	for _, in := range initializeResultSeeds {
		checkInitializeResult(t, []byte(in))
	}
	var r InitializeResult
	if !fastInitializeResult([]byte(initializeResultSeeds[0]), &r) || r.Name != "echo" || len(r.Capabilities) != 6 || len(r.CapabilityParams) != 4 {
		t.Fatalf("the common shape missed the fast path: %+v", r)
	}
	before := r
	if fastInitializeResult([]byte(`{"name":"x"}`), &r) || !reflect.DeepEqual(r, before) {
		t.Fatal("a result with capabilities already set took the fast path, or a refused input changed it")
	}
}

func FuzzInitializeResultDecode(f *testing.F) {
	jsonfuzz.Valid(f, initializeResultSeeds, checkInitializeResult)
}

func checkInitializeResult(t *testing.T, in []byte) {
	t.Helper()
	checkDecode(t, in, func() InitializeResult { return InitializeResult{} })
	checkDecode(t, in, func() InitializeResult {
		return InitializeResult{ProtocolVersion: "p0", Name: "n0", Version: "v0", Capabilities: Capabilities{"c0", "c1"},
			CapabilityParams: CapabilityParams{"k0": json.RawMessage(`0`)}}
	})
}

var capabilityParamsSeeds = []string{
	`[{"name":"echo"},{"name":"count"}]`,
	`[{"name":"greet","description":"Greet someone: /echo:greet <name>"}]`,
	`[{"event":"pre_tool_use","matcher":"*","timeout_ms":250,"on_error":"block"}]`,
	`{"static":"text","dynamic":true}`,
	`{"static":null,"dynamic":null}`,
	`[]`,
	`{}`,
	`null`,
	`[null]`,
	`[{"name":"a"},null]`,
	`[1]`,
	`["x"]`,
	`[{"name":"a","name":"b"}]`,
	`[{"name":"a","name":null}]`,
	`[{"Name":"upper"}]`,
	"[{\"de\u017fcription\":\"fold\"}]",
	`[{"name":"esc\u0041"}]`,
	`[{"timeout_ms":1.5}]`,
	`[{"timeout_ms":1e3}]`,
	`[{"timeout_ms":-7}]`,
	`[{"timeout_ms":-0}]`,
	`[{"timeout_ms":99999999999999999999}]`,
	`[{"timeout_ms":"5"}]`,
	`[{"timeout_ms":null,"event":"e"}]`,
	`{"dynamic":"yes"}`,
	`{"static":"a","unknown":[{"deep":1}]}`,
	` [ { "name" : "spaced" } , { } ] `,
	`"str"`,
	`{"static":"` + strings.Repeat("x", 2000) + `"}`,
}

// TestCapabilityParamsDecodeMatchesEncodingJSON checks Decode's hand
// paths for the host's own types against encoding/json, and that the
// common shapes take them.
func TestCapabilityParamsDecodeMatchesEncodingJSON(t *testing.T) {
	for _, in := range capabilityParamsSeeds {
		checkCapabilityParams(t, []byte(in))
	}
	var tools []ToolDecl
	if !decodeKnown([]byte(capabilityParamsSeeds[0]), &tools) || len(tools) != 2 || tools[1].Name != "count" {
		t.Fatalf("tools missed the fast path: %+v", tools)
	}
	var hooks []HookSubscription
	if !decodeKnown([]byte(capabilityParamsSeeds[2]), &hooks) || len(hooks) != 1 || hooks[0].TimeoutMS != 250 || hooks[0].OnError != "block" {
		t.Fatalf("hooks missed the fast path: %+v", hooks)
	}
	var pd PromptDecl
	if !decodeKnown([]byte(capabilityParamsSeeds[3]), &pd) || pd.Static != "text" || !pd.Dynamic {
		t.Fatalf("the prompt missed the fast path: %+v", pd)
	}
	// CapabilityParams is a map anyone can fill: bytes that are not JSON
	// get json.Unmarshal's error, not a guess.
	for _, bad := range []string{`[{"name":tru}]`, `[{"name":"a"}`, `{"static":"a",}`} {
		p := CapabilityParams{"x": json.RawMessage(bad)}
		var cmds []CommandDecl
		var pd PromptDecl
		if _, err := p.Decode("x", &cmds); err == nil {
			t.Errorf("Decode(%s) into commands: no error", bad)
		}
		if _, err := p.Decode("x", &pd); err == nil {
			t.Errorf("Decode(%s) into the prompt: no error", bad)
		}
	}
}

func FuzzCapabilityParamsDecode(f *testing.F) {
	jsonfuzz.Valid(f, capabilityParamsSeeds, checkCapabilityParams)
}

// checkCapabilityParams decodes in as the params of each type the clamp
// reads, through Decode, and compares with json.Unmarshal.
func checkCapabilityParams(t *testing.T, in []byte) {
	t.Helper()
	checkParams(t, in, func() []ToolDecl { return nil })
	checkParams(t, in, func() []CommandDecl { return nil })
	checkParams(t, in, func() []HookSubscription { return nil })
	checkParams(t, in, func() []HookSubscription { return []HookSubscription{{Event: "e0", TimeoutMS: 9}} })
	checkParams(t, in, func() PromptDecl { return PromptDecl{} })
	checkParams(t, in, func() PromptDecl { return PromptDecl{Static: "s0", Dynamic: true} })
}

func checkParams[T any](t *testing.T, in []byte, start func() T) {
	t.Helper()
	want, got := start(), start()
	p := CapabilityParams{"x": json.RawMessage(in)}
	okGot, gotErr := p.Decode("x", &got)
	okWant := string(in) != "null"
	var wantErr error
	if okWant {
		wantErr = json.Unmarshal(in, &want)
	}
	if okGot != okWant || (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s into %T: Decode = %v, %v; encoding/json: %v, %v", in, got, okGot, gotErr, okWant, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s into %T:\n got %+v\nwant %+v", in, got, got, want)
	}
}

// BenchmarkInitializeResultDecode decodes the echo server's handshake and
// the four params the clamp reads, by hand and with encoding/json, the two
// alternating, and reports the ratio (hand ÷ encoding/json).
func BenchmarkInitializeResultDecode(b *testing.B) {
	in := []byte(initializeResultSeeds[0])
	decode := func(hand bool) {
		var r InitializeResult
		var err error
		if hand {
			err = r.UnmarshalValidJSON(in)
		} else {
			err = json.Unmarshal(in, &r)
		}
		var tools []ToolDecl
		var hooks []HookSubscription
		var cmds []CommandDecl
		var pd PromptDecl
		for _, d := range []struct {
			token string
			v     any
		}{{CapTools, &tools}, {CapHooks, &hooks}, {CapCommands, &cmds}, {CapPrompt, &pd}} {
			raw := r.CapabilityParams[d.token]
			if hand {
				_, err = r.CapabilityParams.Decode(d.token, d.v)
			} else {
				err = json.Unmarshal(raw, d.v)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if err != nil || len(tools) != 2 || pd.Static == "" {
			b.Fatalf("decoded %d tools, prompt %q: %v", len(tools), pd.Static, err)
		}
	}
	var hand, general time.Duration
	for b.Loop() {
		t0 := time.Now()
		decode(true)
		t1 := time.Now()
		decode(false)
		hand += t1.Sub(t0)
		general += time.Since(t1)
	}
	b.ReportMetric(float64(hand.Nanoseconds())/float64(b.N), "hand-ns")
	b.ReportMetric(float64(general.Nanoseconds())/float64(b.N), "encoding/json-ns")
	b.ReportMetric(hand.Seconds()/general.Seconds(), "hand/encoding-json")
}
