package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// A capability server is a set of handlers. In a real extension main calls
// s.Serve(ctx), which speaks the protocol over stdin and stdout; here the
// host side is played by a jsonrpc.Conn over in-memory pipes.
func ExampleServer() {
	s := sdk.NewServer(sdk.Info{Name: "greeter", Version: "0.1.0"}, sdk.Options{Logger: hclog.NewNullLogger()})
	s.Tool("greet", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := call.Bind(&args); err != nil {
			return yep.ToolResult{}, err // the agent reads it as an is_error result
		}
		return yep.ToolResult{Output: "hello, " + args.Name}, nil
	})
	s.Prompt("Call greet to greet someone.")

	host, stop := connect(s)
	defer stop()
	ctx := context.Background()

	var init yep.InitializeResult
	_ = host.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion}, &init)
	fmt.Println(init.Name, init.ProtocolVersion, init.Capabilities)

	var res yep.ToolResult
	_ = host.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "greet", Args: json.RawMessage(`{"name":"Ada"}`)}, &res)
	fmt.Println(res.Output)
	// Output:
	// greeter 1.1 [tools prompt cancel]
	// hello, Ada
}

// A streaming tool reports progress with Update; the host receives each
// update, correlated to its call, before the result. ctx is cancelled when
// the host cancels the call.
func ExampleServer_StreamingTool() {
	s := sdk.NewServer(sdk.Info{Name: "counter"}, sdk.Options{Logger: hclog.NewNullLogger()})
	s.StreamingTool("count", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		for i := 1; i <= 3; i++ {
			if ctx.Err() != nil {
				return yep.ToolResult{}, ctx.Err()
			}
			_ = call.Update(fmt.Sprint(i)) // ErrNotAdvertised when the host does not stream
		}
		return yep.ToolResult{Output: "done"}, nil
	})

	host, stop := connect(s)
	defer stop()
	ctx := context.Background()
	_ = host.Call(ctx, yep.MethodInitialize, yep.InitializeParams{Capabilities: yep.Capabilities{yep.CapStreaming}}, nil)

	var res yep.ToolResult
	_ = host.CallWith(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "count"}, &res, jsonrpc.CallOptions{
		OnNotify: func(method string, params json.RawMessage) {
			var u yep.ToolUpdateParams
			_ = json.Unmarshal(params, &u)
			fmt.Println(method, u.Output)
		},
	})
	fmt.Println(res.Output)
	// Output:
	// tool/update 1
	// tool/update 2
	// tool/update 3
	// done
}

// A hook subscription names an event and a tool-name glob; the handler
// allows, blocks or mutates the call.
func ExampleServer_OnHook() {
	s := sdk.NewServer(sdk.Info{Name: "guard"}, sdk.Options{Logger: hclog.NewNullLogger()})
	s.OnHook(yep.HookPreToolUse, "bash*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		if strings.Contains(string(h.Args), "rm -rf") {
			return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: "guard: refusing rm -rf"}, nil
		}
		return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
	}, sdk.HookOptions{TimeoutMS: 500, OnError: "block"})

	host, stop := connect(s)
	defer stop()
	ctx := context.Background()
	var init yep.InitializeResult
	_ = host.Call(ctx, yep.MethodInitialize, yep.InitializeParams{}, &init)
	fmt.Println(string(init.CapabilityParams[yep.CapHooks]))

	payload, _ := json.Marshal(yep.HookPayload{Args: json.RawMessage(`{"command":"rm -rf /"}`)})
	var res yep.HookFireResult
	_ = host.Call(ctx, yep.MethodHookFire, yep.HookFireParams{Event: yep.HookPreToolUse, ToolName: "bash", Payload: payload}, &res)
	fmt.Println(res.Decision, res.Reason)
	// Output:
	// [{"event":"pre_tool_use","matcher":"bash*","timeout_ms":500,"on_error":"block"}]
	// block guard: refusing rm -rf
}

// OnConfig receives initialize.config once, before the handshake answers;
// returning an error refuses the config and fails initialize.
func ExampleServer_OnConfig() {
	s := sdk.NewServer(sdk.Info{Name: "exporter"}, sdk.Options{Logger: hclog.NewNullLogger()})
	var endpoint string
	s.OnConfig(func(cfg json.RawMessage) error {
		var c struct {
			Endpoint string `json:"endpoint"`
		}
		if err := json.Unmarshal(cfg, &c); err != nil || c.Endpoint == "" {
			return fmt.Errorf("config.endpoint is required (set it with /extensions configure exporter)")
		}
		endpoint = c.Endpoint
		return nil
	})

	host, stop := connect(s)
	defer stop()
	err := host.Call(context.Background(), yep.MethodInitialize, yep.InitializeParams{Config: json.RawMessage(`{"endpoint":"http://127.0.0.1:4318"}`)}, nil)
	fmt.Println(err, endpoint)
	// Output:
	// <nil> http://127.0.0.1:4318
}

// Ask and Status reach the user through the host, but only when the server
// opted in (Info) and the host advertised the method; otherwise they
// return an error and send nothing.
func ExampleServer_Ask() {
	s := sdk.NewServer(sdk.Info{Name: "setup", UIAsk: true}, sdk.Options{Logger: hclog.NewNullLogger()})
	s.Tool("configure", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		ans, err := s.Ask(ctx, yep.UIAskParams{Prompt: "Which region?", Options: []string{"eu", "us"}})
		if err != nil {
			return yep.ToolResult{}, err
		}
		return yep.ToolResult{Output: "region " + ans.Answer}, nil
	})

	host, stop := connectWith(s, jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return yep.UIAskResult{Answer: "eu"}, nil // the user picked eu
	}))
	defer stop()
	ctx := context.Background()
	_ = host.Call(ctx, yep.MethodInitialize, yep.InitializeParams{Capabilities: yep.Capabilities{yep.CapUIAsk}}, nil)
	var res yep.ToolResult
	_ = host.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "configure"}, &res)
	fmt.Println(res.Output)
	// Output:
	// region eu
}

func connect(s *sdk.Server) (*jsonrpc.Conn, func()) { return connectWith(s, nil) }

// connectWith serves s over in-memory pipes and returns the host's end.
func connectWith(s *sdk.Server, h jsonrpc.Handler) (*jsonrpc.Conn, func()) {
	serverIn, hostOut := io.Pipe()
	hostIn, serverOut := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.ServeConn(context.Background(), serverIn, serverOut)
		serverOut.Close()
	}()
	host := jsonrpc.NewConn(hostIn, hostOut, jsonrpc.Options{Handler: h, Closer: hostOut})
	return host, func() {
		host.Close() // end of input: the server returns
		<-done
		host.Wait()
	}
}
