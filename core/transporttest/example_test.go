package transporttest_test

import (
	"context"
	"fmt"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
)

// A Transport starts an SDK server in-process; the host side talks to it
// over the instance's pipes as it would to a subprocess. A host.Session
// takes the same Transport in its options.
func ExampleTransport() {
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
		"greeter": transporttest.SDK(sdk.Info{}, func(s *sdk.Server) {
			s.Tool("greet", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
				return yep.ToolResult{Output: "hello from " + call.Name}, nil
			})
		}),
	}}
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "greeter"})
	if err != nil {
		panic(err)
	}
	conn := jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{Closer: inst.Stdin()})
	ctx := context.Background()
	var init yep.InitializeResult
	if err := conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion}, &init); err != nil {
		panic(err)
	}
	_ = conn.Notify(ctx, yep.MethodInitialized, yep.InitializedParams{})
	var res yep.ToolResult
	if err := conn.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{Name: "greet"}, &res); err != nil {
		panic(err)
	}
	fmt.Println(init.Name+":", res.Output)

	conn.Close() // closes stdin: the server returns
	fmt.Println("stopped:", inst.Stop(time.Second), "pid:", inst.PID())
	conn.Wait()
	// Output:
	// greeter: hello from greet
	// stopped: <nil> pid: 0
}
