package host_test

import (
	"context"
	"encoding/json"
	"fmt"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
)

// A Session runs the extensions it is granted and routes tool calls to
// them. Here the extension's server is an in-process SDK server started by
// transporttest; a real host passes the stdio transport and grants built
// from approved manifests.
func ExampleSession() {
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
		"greeter": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.Tool("greet", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				var args struct {
					Name string `json:"name"`
				}
				if err := call.Bind(&args); err != nil {
					return yep.ToolResult{}, err
				}
				return yep.ToolResult{Output: "hello, " + args.Name}, nil
			})
		}),
	}}
	s := host.NewSession(host.SessionOptions{
		Grants: []host.Grant{{
			Name: "greeter", ProtocolVersion: yep.ProtocolVersion,
			Server: core.ServerSpec{Name: "greeter"},
			Tools:  []host.ToolGrant{{Name: "greet", Description: "Greets someone.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		}},
		Transport: tr,
	})
	defer s.Close()
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	res, err := s.CallTool(ctx, "greet", "call-1", json.RawMessage(`{"name":"yolop"}`), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Output)
	// Output: hello, yolop
}

// Subscribe is the one stream of what happens in a session: typed events,
// in order, on a goroutine of the subscriber's own.
func ExampleSession_Subscribe() {
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
		"counter": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.StreamingTool("count", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				for i := 1; i <= 2; i++ {
					if err := call.Update(fmt.Sprint(i)); err != nil {
						return yep.ToolResult{}, err
					}
				}
				return yep.ToolResult{Output: "counted"}, nil
			})
		}),
	}}
	s := host.NewSession(host.SessionOptions{
		Grants: []host.Grant{{
			Name: "counter", ProtocolVersion: yep.ProtocolVersion,
			Server: core.ServerSpec{Name: "counter"},
			Tools:  []host.ToolGrant{{Name: "count", Streaming: true}},
		}},
		Transport: tr,
	})
	defer s.Close()
	s.Subscribe(func(ev host.Event) {
		switch d := ev.Data.(type) {
		case yep.ToolStartedData:
			fmt.Println(ev.Type, d.Tool)
		case yep.ToolUpdateData:
			fmt.Println(ev.Type, d.Output)
		case yep.ToolCompletedData:
			fmt.Println(ev.Type, d.Status)
		}
	})
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	if _, err := s.CallTool(ctx, "count", "call-1", nil, nil); err != nil {
		panic(err)
	}
	_ = s.Flush(ctx) // every event so far has been handed to the subscriber
	// Output:
	// tool.started count
	// tool.update 1
	// tool.update 2
	// tool.completed ok
}
