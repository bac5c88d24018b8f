package sdk_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"testing"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// BenchmarkToolCallInProcess runs the full stack — an SDK server and a
// jsonrpc client — in one process over real OS pipes, so one CPU or
// allocation profile covers both sides of a round trip:
//
//	go test -run '^$' -bench ToolCallInProcess -benchmem -cpuprofile cpu.out -memprofile mem.out ./core/sdk
//
// allocs/op counts the allocations of both peers per call.
func BenchmarkToolCallInProcess(b *testing.B) {
	s := sdk.NewServer(sdk.Info{Name: "echo"}, sdk.Options{Logger: hclog.NewNullLogger()})
	s.Tool("echo", echoTool)
	serverIn, hostOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	hostIn, serverOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.ServeConn(context.Background(), serverIn, serverOut)
		serverOut.Close()
	}()
	conn := jsonrpc.NewConn(hostIn, hostOut, jsonrpc.Options{Closer: closers{hostOut, hostIn}})
	defer func() {
		conn.Close()
		<-done
		conn.Wait()
	}()
	ctx := context.Background()
	if err := conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0"}, nil); err != nil {
		b.Fatal(err)
	}
	params := yep.ToolCallParams{ToolCallID: "t", Name: "echo", Args: json.RawMessage(`{"text":"hello"}`)}
	call := func(b *testing.B) {
		var res yep.ToolResult
		if err := conn.Call(ctx, yep.MethodToolCall, params, &res); err != nil || res.Output != "hello" {
			b.Errorf("%+v %v", res, err)
		}
	}
	b.Run("callers=1", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			call(b)
		}
	})
	b.Run("callers=8", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call(b)
			}
		})
	})
}
