// Package testserver is a real MCP server built with the go-sdk, for the
// mcp module's tests (and its benchmark): echo, sum, a slow tool that
// reports progress and notes its cancellation, and a huge result.
package testserver

import (
	"context"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type sumIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type slowIn struct {
	Steps int `json:"steps"`
	// Hold keeps the call running after the steps until it is cancelled.
	Hold bool `json:"hold,omitempty"`
	// Gate, if set, is a file the call waits for after the steps: the
	// client creates it when progress reached it, so a test can tell
	// progress arrived during the call.
	Gate string `json:"gate,omitempty"`
}

type bigIn struct {
	MiB int `json:"mib"`
}

type envIn struct {
	Name string `json:"name"`
}

// New returns the server. cancelMark, if set, is a file the slow tool
// writes "cancelled" to when its context ends early.
func New(cancelMark string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "yolop-testserver", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text back."}, func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "sum", Description: "Add two numbers."}, func(_ context.Context, _ *sdk.CallToolRequest, in sumIn) (*sdk.CallToolResult, map[string]float64, error) {
		return nil, map[string]float64{"sum": in.A + in.B}, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Report one environment variable."}, func(_ context.Context, _ *sdk.CallToolRequest, in envIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: os.Getenv(in.Name)}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Count steps with progress; hold until cancelled if asked."}, func(ctx context.Context, req *sdk.CallToolRequest, in slowIn) (*sdk.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps; i++ {
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: "step"})
			}
		}
		for in.Gate != "" && ctx.Err() == nil {
			if _, err := os.Stat(in.Gate); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if in.Hold {
			<-ctx.Done()
			if cancelMark != "" {
				_ = os.WriteFile(cancelMark, []byte("cancelled"), 0o600)
			}
			return nil, nil, ctx.Err()
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "Return a result of the given size."}, func(_ context.Context, _ *sdk.CallToolRequest, in bigIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", in.MiB<<20)}}}, nil, nil
	})
	return s
}

// Named returns a server whose tools are an echo tool under each of
// names, as they are: a server announcing whatever tool names a test needs,
// valid or not.
func Named(names []string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "yolop-testserver", Version: "1"}, nil)
	for _, n := range names {
		sdk.AddTool(s, &sdk.Tool{Name: n, Description: "Echo the text back, prefixed with the tool name."}, func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: n + ": " + in.Text}}}, nil, nil
		})
	}
	return s
}

// Hang reads stdin and never answers: a server wedged on initialize.
func Hang() {
	buf := make([]byte, 4096)
	for {
		if _, err := os.Stdin.Read(buf); err != nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
