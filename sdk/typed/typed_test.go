package typed_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	"yolop.dev/sdk/typed"
)

// host is the host side of a real JSON-RPC connection to a Server, over
// in-memory pipes.
type host struct {
	*jsonrpc.Conn
	mu      sync.Mutex
	updates []yep.ToolUpdateParams
}

func (h *host) Handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method == yep.MethodToolUpdate {
		var u yep.ToolUpdateParams
		if err := json.Unmarshal(req.Params, &u); err != nil {
			return nil, err
		}
		h.mu.Lock()
		h.updates = append(h.updates, u)
		h.mu.Unlock()
	}
	return nil, nil
}

type closers []io.Closer

func (c closers) Close() error {
	for _, x := range c {
		x.Close()
	}
	return nil
}

// serve runs s over pipes, completes the handshake (the host advertising
// streaming) and returns the host side and the handshake's tools.
func serve(t *testing.T, s *sdk.Server) (*host, []yep.ToolDecl) {
	t.Helper()
	serverIn, hostOut := io.Pipe()
	hostIn, serverOut := io.Pipe()
	h := &host{}
	h.Conn = jsonrpc.NewConn(hostIn, hostOut, jsonrpc.Options{Handler: h, Closer: closers{hostOut, hostIn}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.ServeConn(ctx, serverIn, serverOut)
		serverOut.Close()
	}()
	t.Cleanup(func() {
		cancel()
		h.Conn.Close()
		h.Conn.Wait()
		<-done
	})
	var res yep.InitializeResult
	if err := h.Call(t.Context(), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion, Capabilities: yep.Capabilities{yep.CapStreaming}}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	var tools []yep.ToolDecl
	if ok, err := res.CapabilityParams.Decode(yep.CapTools, &tools); !ok || err != nil {
		t.Fatalf("capability_params.tools: %v %v", ok, err)
	}
	return h, tools
}

func (h *host) call(t *testing.T, name, args string) (yep.ToolResult, error) {
	t.Helper()
	var res yep.ToolResult
	err := h.Call(t.Context(), yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "c1", Name: name, Args: json.RawMessage(args)}, &res)
	return res, err
}

func newServer() *sdk.Server {
	return sdk.NewServer(sdk.Info{Name: "weather", Version: "0.0.1"}, sdk.Options{Logger: hclog.NewNullLogger()})
}

type Place struct {
	City    string `json:"city" jsonschema:"the city to forecast"`
	Country string `json:"country,omitempty"`
}

type ForecastArgs struct {
	Place Place           `json:"place"`
	Days  int             `json:"days,omitempty" jsonschema:"how many days, 1 if absent"`
	Units []string        `json:"units,omitempty"`
	Extra json.RawMessage `json:"extra,omitempty"`
}

type Forecast struct {
	City  string    `json:"city"`
	Temps []float64 `json:"temps"`
}

func (f Forecast) String() string { return "forecast for " + f.City }

type Plain struct {
	N int `json:"n"`
}

// forecast records how often it ran and what it got.
type forecast struct {
	runs atomic.Int64
	got  atomic.Pointer[ForecastArgs]
}

func (f *forecast) handler(_ context.Context, _ *sdk.ToolCall, in ForecastArgs) (Forecast, error) {
	f.runs.Add(1)
	f.got.Store(&in)
	temps := make([]float64, max(in.Days, 1))
	return Forecast{City: in.Place.City, Temps: temps}, nil
}

func mustSchema[T any](t *testing.T) string {
	t.Helper()
	s, err := typed.Schema[T]()
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

// The handshake carries the schemas derived from In and Out: properties
// under their json names, descriptions from jsonschema tags, required
// unless omitempty, no other properties, and json.RawMessage as any value
// (the schema true).
func TestHandshakeCarriesDerivedSchemas(t *testing.T) {
	s := newServer()
	f := &forecast{}
	typed.AddTool(s, "forecast", f.handler)
	_, tools := serve(t, s)
	if len(tools) != 1 || tools[0].Name != "forecast" {
		t.Fatalf("tools = %+v", tools)
	}
	in := tools[0].InputSchema
	want := `{"type":"object","properties":{"place":{"type":"object","properties":{"city":{"type":"string","description":"the city to forecast"},"country":{"type":"string"}},"required":["city"],"additionalProperties":false},"days":{"type":"integer","description":"how many days, 1 if absent"},"units":{"type":["null","array"],"items":{"type":"string"}},"extra":true},"required":["place"],"additionalProperties":false}`
	if string(in) != want {
		t.Errorf("input_schema =\n%s\nwant\n%s", in, want)
	}
	if got := mustSchema[ForecastArgs](t); got != want {
		t.Errorf("Schema[ForecastArgs] = %s; want what the handshake carries", got)
	}
	wantOut := `{"type":"object","properties":{"city":{"type":"string"},"temps":{"type":["null","array"],"items":{"type":"number"}}},"required":["city","temps"],"additionalProperties":false}`
	if string(tools[0].OutputSchema) != wantOut {
		t.Errorf("output_schema =\n%s\nwant\n%s", tools[0].OutputSchema, wantOut)
	}
}

// Valid arguments decode into In; Out becomes the result's data, and its
// String method the output.
func TestArgumentsDecodeAndOutReachesTheResult(t *testing.T) {
	s := newServer()
	f := &forecast{}
	typed.AddTool(s, "forecast", f.handler)
	h, _ := serve(t, s)
	res, err := h.call(t, "forecast", `{"place":{"city":"Oslo","country":"NO"},"days":2,"units":["c"],"extra":{"any":[1]}}`)
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	got := f.got.Load()
	if got == nil || got.Place.City != "Oslo" || got.Place.Country != "NO" || got.Days != 2 || len(got.Units) != 1 || string(got.Extra) != `{"any":[1]}` {
		t.Fatalf("the handler got %+v", got)
	}
	if res.Output != "forecast for Oslo" || string(res.Data) != `{"city":"Oslo","temps":[0,0]}` || res.IsError {
		t.Fatalf("result = %+v (data %s)", res, res.Data)
	}
}

// Arguments that do not match the schema are refused with invalid params
// and a message naming the field, and the handler never runs.
func TestMismatchedArgumentsAreInvalidParams(t *testing.T) {
	s := newServer()
	f := &forecast{}
	typed.AddTool(s, "forecast", f.handler)
	h, _ := serve(t, s)
	for _, tc := range []struct{ args, want string }{
		{``, `missing properties: ["place"]`},
		{`null`, `missing properties: ["place"]`},
		{`{"place":{}}`, `at place: required: missing properties: ["city"]`},
		{`{"place":{"city":7}}`, `at place.city: type: 7 has type "integer", want "string"`},
		{`{"place":{"city":"Oslo"},"days":"2"}`, `at days: type: 2 has type "string", want "integer"`},
		{`{"place":{"city":"Oslo"},"days":1.5}`, `at days:`},
		{`{"place":{"city":"Oslo"},"units":[1]}`, `at units[]: type: 1 has type "integer", want "string"`},
		{`{"place":{"city":"Oslo"},"Days":2}`, `"Days"`},
		{`[1]`, `has type "array", want "object"`},
	} {
		_, err := h.call(t, "forecast", tc.args)
		var we *yep.Error
		if !errors.As(err, &we) || we.Code != yep.CodeInvalidParams {
			t.Errorf("args %s: error %v; want invalid params (%d)", tc.args, err, yep.CodeInvalidParams)
			continue
		}
		if !strings.Contains(we.Message, `tool "forecast": invalid arguments: `) || !strings.Contains(we.Message, tc.want) {
			t.Errorf("args %s: message %q; want it to contain %q", tc.args, we.Message, tc.want)
		}
	}
	if n := f.runs.Load(); n != 0 {
		t.Errorf("the handler ran %d times on refused arguments", n)
	}
}

// A string Out is the output; a yep.ToolResult Out is the result as it
// is; neither has an output schema. An Out without String shows its JSON.
func TestOutKinds(t *testing.T) {
	s := newServer()
	typed.AddTool(s, "text", func(_ context.Context, _ *sdk.ToolCall, in Plain) (string, error) {
		return strings.Repeat("x", in.N), nil
	})
	typed.AddTool(s, "raw", func(_ context.Context, _ *sdk.ToolCall, in map[string]any) (yep.ToolResult, error) {
		return yep.ToolResult{Output: "raw", Data: json.RawMessage(`{"k":1}`)}, nil
	})
	typed.AddTool(s, "json", func(_ context.Context, _ *sdk.ToolCall, in Plain) (Plain, error) {
		return Plain{N: in.N * 2}, nil
	})
	h, tools := serve(t, s)
	for _, d := range tools[:2] {
		if d.OutputSchema != nil {
			t.Errorf("%s has output_schema %s; want none", d.Name, d.OutputSchema)
		}
	}
	if string(tools[1].InputSchema) != `{"type":"object","additionalProperties":true}` {
		t.Errorf("map[string]any input_schema = %s", tools[1].InputSchema)
	}
	if res, err := h.call(t, "text", `{"n":3}`); err != nil || res.Output != "xxx" || res.Data != nil {
		t.Errorf("text = %+v, %v", res, err)
	}
	if res, err := h.call(t, "raw", `{"anything":true}`); err != nil || res.Output != "raw" || string(res.Data) != `{"k":1}` {
		t.Errorf("raw = %+v, %v", res, err)
	}
	if res, err := h.call(t, "json", `{"n":4}`); err != nil || res.Output != `{"n":8}` || string(res.Data) != `{"n":8}` {
		t.Errorf("json = %+v, %v", res, err)
	}
}

// A plain error is a tool-level failure; a *yep.Error fails the request.
func TestHandlerErrors(t *testing.T) {
	s := newServer()
	typed.AddTool(s, "fail", func(_ context.Context, _ *sdk.ToolCall, in Plain) (Plain, error) {
		if in.N == 0 {
			return Plain{}, errors.New("n must not be zero")
		}
		return Plain{}, yep.Errorf(yep.CodeInternalError, "broken")
	})
	h, _ := serve(t, s)
	if res, err := h.call(t, "fail", `{"n":0}`); err != nil || !res.IsError || res.Output != "n must not be zero" {
		t.Errorf("plain error = %+v, %v", res, err)
	}
	var we *yep.Error
	if _, err := h.call(t, "fail", `{"n":1}`); !errors.As(err, &we) || we.Code != yep.CodeInternalError {
		t.Errorf("wire error = %v", err)
	}
}

// A streaming typed tool announces streaming and its updates reach the
// host before the result.
func TestStreamingTool(t *testing.T) {
	s := newServer()
	typed.AddStreamingTool(s, "count", func(_ context.Context, call *sdk.ToolCall, in Plain) (string, error) {
		for i := range in.N {
			if err := call.Progress(float64(i+1), float64(in.N), ""); err != nil {
				return "", err
			}
		}
		return "counted", nil
	})
	h, _ := serve(t, s)
	res, err := h.call(t, "count", `{"n":3}`)
	if err != nil || res.Output != "counted" {
		t.Fatalf("count = %+v, %v", res, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.updates) != 3 || h.updates[2].Progress == nil || h.updates[2].Progress.Current != 3 {
		t.Errorf("updates = %+v; want 3 progress reports", h.updates)
	}
}

type cycle struct {
	Next *cycle `json:"next"`
}

func TestRegistrationPanics(t *testing.T) {
	noop := func(context.Context, *sdk.ToolCall, Plain) (string, error) { return "", nil }
	for name, tc := range map[string]struct {
		f    func(s *sdk.Server)
		want string
	}{
		"In not an object": {func(s *sdk.Server) {
			typed.AddTool(s, "a", func(context.Context, *sdk.ToolCall, string) (string, error) { return "", nil })
		}, "must be a struct or a map"},
		"In a cycle": {func(s *sdk.Server) {
			typed.AddTool(s, "a", func(context.Context, *sdk.ToolCall, cycle) (string, error) { return "", nil })
		}, "has no JSON Schema"},
		"Out a channel": {func(s *sdk.Server) {
			typed.AddTool(s, "a", func(context.Context, *sdk.ToolCall, Plain) (chan int, error) { return nil, nil })
		}, "result type chan int has no JSON Schema"},
		"nil handler": {func(s *sdk.Server) { typed.AddTool[Plain, string](s, "a", nil) }, "needs a handler"},
		"duplicate":   {func(s *sdk.Server) { typed.AddTool(s, "a", noop); typed.AddTool(s, "a", noop) }, "registered twice"},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				p := recover()
				if p == nil {
					t.Fatalf("%s did not panic", name)
				}
				if msg, _ := p.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v; want it to mention %q", p, tc.want)
				}
			}()
			tc.f(newServer())
		})
	}
}
