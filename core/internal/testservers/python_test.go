package testservers_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/internal/testdeadline"
	"yolop.dev/core/internal/testservers"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// TestPythonServer drives a hand-written Python server (raw protocol,
// standard library only) through core/jsonrpc: the protocol is language
// neutral, and the Go client needs nothing from the Go SDK.
func TestPythonServer(t *testing.T) {
	leakcheck.Check(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the language-neutrality test (apt-get install python3): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "pyserver.py"))
	if err != nil {
		t.Fatal(err)
	}
	p := testservers.Start(t, jsonrpc.Options{}, python, "-u", script)
	c := p.Conn
	ctx, cancel := context.WithTimeout(context.Background(), testdeadline.Left(t))
	defer cancel()

	if err := c.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "echo"}, nil); !isCode(err, yep.CodeNotInitialized) {
		t.Errorf("call before initialize: %v", err)
	}

	var init yep.InitializeResult
	if err := c.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.3", Capabilities: yep.Capabilities{yep.CapStreaming, yep.CapCancel}}, &init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	// The script speaks 1.0: an older minor of our major still interoperates,
	// and the lower minor is spoken.
	if v, err := yep.Negotiate(yep.Current, init.ProtocolVersion); err != nil || v.Major != yep.ProtocolMajor || v.String() != init.ProtocolVersion {
		t.Errorf("negotiated %q: %v", init.ProtocolVersion, err)
	}
	var tools []yep.ToolDecl
	if ok, err := init.CapabilityParams.Decode(yep.CapTools, &tools); !ok || err != nil || len(tools) != 2 {
		t.Errorf("tools = %v %v %v", tools, ok, err)
	}
	if !slices.Equal(init.Capabilities, yep.Capabilities{yep.CapTools, yep.CapStreaming, yep.CapCancel}) {
		t.Errorf("capabilities = %v", init.Capabilities)
	}
	if err := c.Notify(ctx, yep.MethodInitialized, yep.InitializedParams{}); err != nil {
		t.Fatal(err)
	}

	var res yep.ToolResult
	if err := c.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "echo", Args: json.RawMessage(`{"text":"ünïcode ✓"}`)}, &res); err != nil || res.Output != "ünïcode ✓" {
		t.Fatalf("echo = %+v %v", res, err)
	}

	var updates []string
	err = c.CallWith(ctx, yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "t2", Name: "count", Args: json.RawMessage(`{"n":4,"delay_ms":1}`)}, &res, jsonrpc.CallOptions{
		OnNotify: func(method string, params json.RawMessage) {
			var u yep.ToolUpdateParams
			if method == yep.MethodToolUpdate && json.Unmarshal(params, &u) == nil && u.ToolCallID == "t2" {
				updates = append(updates, u.Output)
			}
		},
	})
	if err != nil || res.Output != "counted to 4" {
		t.Fatalf("count = %+v %v", res, err)
	}
	if want := []string{"1", "2", "3", "4"}; !slices.Equal(updates, want) {
		t.Errorf("updates = %v, want %v", updates, want)
	}

	// Cancel mid-stream: the call resolves cancelled, the server lives on.
	cctx, ccancel := context.WithCancel(ctx)
	n := 0
	err = c.CallWith(cctx, yep.MethodToolCall, yep.ToolCallParams{Name: "count", Args: json.RawMessage(`{"n":100000,"delay_ms":1}`)}, &res, jsonrpc.CallOptions{
		OnNotify: func(string, json.RawMessage) {
			if n++; n == 2 {
				ccancel()
			}
		},
	})
	ccancel()
	if !errors.Is(err, yep.ErrCancelled) {
		t.Fatalf("cancelled count: %v", err)
	}
	// An explicit cancel of an id that is not in flight is benign.
	var cr yep.CancelResult
	if err := c.Call(ctx, yep.MethodCancel, yep.CancelParams{ID: yep.IntID(999)}, &cr); err != nil || cr.Cancelled {
		t.Errorf("cancel of an unknown id = %+v %v", cr, err)
	}
	if err := c.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "echo", Args: json.RawMessage(`{"text":"alive"}`)}, &res); err != nil || res.Output != "alive" {
		t.Fatalf("echo after cancel = %+v %v", res, err)
	}

	if err := c.Call(ctx, yep.MethodShutdown, yep.ShutdownParams{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(ctx, yep.MethodExit, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(ctx); err != nil {
		t.Fatalf("python server exit: %v\n%s", err, p.Stderr())
	}
}

func isCode(err error, code int64) bool {
	var we *yep.Error
	return errors.As(err, &we) && we.Code == code
}
