package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// A tool registered with ToolWith carries its schemas into the
// handshake's ToolDecl, next to tools registered without; Streaming
// announces "streaming" and lets the handler send tool/update.
func TestToolWithCarriesSchemasIntoTheHandshake(t *testing.T) {
	in := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	out := json.RawMessage(`{"type":"object"}`)
	s := sdk.NewServer(sdk.Info{Name: "w"}, quiet())
	s.Tool("plain", echoTool)
	s.ToolWith("typed", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		if err := call.Update("working"); err != nil {
			return yep.ToolResult{}, err
		}
		return yep.ToolResult{Output: "done"}, nil
	}, sdk.ToolOptions{Streaming: true, InputSchema: in, OutputSchema: out})
	h := serve(t, s)
	res := h.initialize(t, yep.CapStreaming)
	if !res.Capabilities.Has(yep.CapStreaming) || !res.Capabilities.Has(yep.CapTools) {
		t.Errorf("capabilities = %v, want tools and streaming", res.Capabilities)
	}
	var tools []yep.ToolDecl
	if ok, err := res.CapabilityParams.Decode(yep.CapTools, &tools); !ok || err != nil {
		t.Fatalf("capability_params.tools: %v %v", ok, err)
	}
	if len(tools) != 2 || tools[0].Name != "plain" || tools[0].InputSchema != nil || tools[0].OutputSchema != nil {
		t.Fatalf("tools = %+v; want plain without schemas first", tools)
	}
	if tools[1].Name != "typed" || string(tools[1].InputSchema) != string(in) || string(tools[1].OutputSchema) != string(out) {
		t.Fatalf("typed = %s %s %s; want the registered schemas", tools[1].Name, tools[1].InputSchema, tools[1].OutputSchema)
	}
	if r, err := h.tool(t, "typed", `{}`); err != nil || r.Output != "done" {
		t.Fatalf("typed call = %+v, %v", r, err)
	}
	if got := strings.Join(h.received(), "\n"); !strings.Contains(got, yep.MethodToolUpdate) {
		t.Errorf("no tool/update reached the host: %s", got)
	}
}

// Without Streaming, a ToolWith tool is a plain tool: tool/update is
// refused locally.
func TestToolWithWithoutStreaming(t *testing.T) {
	s := sdk.NewServer(sdk.Info{Name: "w"}, quiet())
	s.ToolWith("t", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		err := call.Update("x")
		return yep.ToolResult{Output: "declared: " + boolText(!errors.Is(err, sdk.ErrNotDeclared))}, nil
	}, sdk.ToolOptions{})
	h := serve(t, s)
	res := h.initialize(t, yep.CapStreaming)
	if res.Capabilities.Has(yep.CapStreaming) {
		t.Errorf("capabilities = %v; a non-streaming tool announced streaming", res.Capabilities)
	}
	if r, err := h.tool(t, "t", `{}`); err != nil || r.Output != "declared: false" {
		t.Fatalf("call = %+v, %v", r, err)
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestToolWithPanics(t *testing.T) {
	for name, f := range map[string]func(s *sdk.Server){
		"invalid input schema":  func(s *sdk.Server) { s.ToolWith("a", echoTool, sdk.ToolOptions{InputSchema: json.RawMessage(`{`)}) },
		"invalid output schema": func(s *sdk.Server) { s.ToolWith("a", echoTool, sdk.ToolOptions{OutputSchema: json.RawMessage(`nope`)}) },
		"duplicate":             func(s *sdk.Server) { s.Tool("a", echoTool); s.ToolWith("a", echoTool, sdk.ToolOptions{}) },
		"no handler":            func(s *sdk.Server) { s.ToolWith("a", nil, sdk.ToolOptions{}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f(sdk.NewServer(sdk.Info{}, quiet()))
		})
	}
}
