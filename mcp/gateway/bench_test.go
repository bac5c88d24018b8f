package gateway_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"yolop.dev/core/host"
	"yolop.dev/mcp/gateway"
	"yolop.dev/mcp/internal/testpkg"
	"yolop.dev/transport/stdio"
)

// BenchmarkGatewayToolCall measures one echo tool call four ways in the
// same run, in rotating blocks of 50 sequential calls so every path sees
// the same machine noise:
//
//   - mcp-direct: the go-sdk client to a go-sdk MCP server over the stdio
//     pipes of a subprocess (the floor an MCP client pays anyway);
//   - gateway-stdio: the go-sdk client to the gateway in a subprocess over
//     stdio, which calls the echo extension (a YEP subprocess) — what a
//     client of `yolop mcp serve` pays;
//   - gateway-inproc: the gateway in this process (in-memory MCP
//     transport), so only the YEP hop crosses a pipe;
//   - yep-direct: host.Session.CallTool on the echo extension, no MCP.
//
// It reports each path's p50 in µs and the ratios to mcp-direct.
func BenchmarkGatewayToolCall(b *testing.B) {
	ctx := context.Background()
	connect := func(t sdk.Transport) *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil).Connect(ctx, t, nil)
		if err != nil {
			b.Fatal(err)
		}
		return cs
	}
	direct := connect(&sdk.CommandTransport{Command: exec.Command(testpkg.Bin("mcptestserver"))})
	defer direct.Close()

	g, dir := testpkg.EchoDir(b)
	viaProc := connect(&sdk.CommandTransport{Command: exec.Command(testpkg.Bin("gatewaycmd"), dir)})
	defer viaProc.Close()

	gw := gateway.New(gateway.Options{})
	s := host.NewSession(host.SessionOptions{Grants: []host.Grant{g}, Transport: stdio.New(stdio.Options{Logger: hclog.NewNullLogger()}), Ask: gw})
	defer s.Close()
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	gw.Attach(s)
	st, ct := sdk.NewInMemoryTransports()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go gw.Serve(sctx, st)
	inproc := connect(ct)
	defer inproc.Close()

	mcpCall := func(cs *sdk.ClientSession) func() {
		return func() {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
			if err != nil || res.IsError {
				b.Fatalf("call: %+v, %v", res, err)
			}
		}
	}
	args := json.RawMessage(`{"text":"hello"}`)
	paths := []struct {
		name string
		call func()
		d    []time.Duration
	}{
		{name: "mcp-direct", call: mcpCall(direct)},
		{name: "gateway-stdio", call: mcpCall(viaProc)},
		{name: "gateway-inproc", call: mcpCall(inproc)},
		{name: "yep-direct", call: func() {
			if _, err := s.CallTool(ctx, "echo", "b", args, nil); err != nil {
				b.Fatal(err)
			}
		}},
	}
	for i := range paths { // warm up
		for range 20 {
			paths[i].call()
		}
	}
	const block = 50
	b.ResetTimer()
	for n := 0; n < b.N; n += block {
		for i := range paths {
			p := &paths[(i+n/block)%len(paths)]
			for range block {
				t0 := time.Now()
				p.call()
				p.d = append(p.d, time.Since(t0))
			}
		}
	}
	b.StopTimer()
	p50 := map[string]float64{}
	for _, p := range paths {
		sort.Slice(p.d, func(i, j int) bool { return p.d[i] < p.d[j] })
		v := float64(p.d[len(p.d)/2].Nanoseconds()) / 1e3
		p50[p.name] = v
		b.ReportMetric(v, "µs-p50-"+p.name)
	}
	for _, n := range []string{"gateway-stdio", "gateway-inproc", "yep-direct"} {
		b.ReportMetric(p50[n]/p50["mcp-direct"], "x-"+n+"/mcp-direct")
	}
}
