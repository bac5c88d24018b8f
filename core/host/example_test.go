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
