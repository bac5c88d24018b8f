// Package echoext is the echo extension's server logic, importable so the
// yolop binary can embed it for its demo and tests can run it in-process.
// The command in the parent directory serves it over stdio.
package echoext

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// Version is the server version.
var Version = "0.1.0"

// Prompt is the static system-prompt contribution.
const Prompt = "The echo extension is installed: call the echo tool to repeat text and count to watch streamed progress."

// New returns the echo server with every handler registered.
func New(log hclog.Logger) *sdk.Server {
	s := sdk.NewServer(sdk.Info{Name: "echo", Version: Version}, sdk.Options{Logger: log})

	s.Tool("echo", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		var args struct {
			Text string `json:"text"`
		}
		if err := call.Bind(&args); err != nil {
			return yep.ToolResult{}, err
		}
		return yep.ToolResult{Output: args.Text}, nil
	})

	s.StreamingTool("count", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		args := struct {
			N       int `json:"n"`
			DelayMS int `json:"delay_ms"`
		}{N: 3, DelayMS: 10}
		if err := call.Bind(&args); err != nil {
			return yep.ToolResult{}, err
		}
		if args.N < 0 || args.N > 100000 {
			return yep.ToolResult{}, fmt.Errorf("n is %d; want 0 to 100000", args.N)
		}
		tick := time.NewTicker(time.Duration(max(args.DelayMS, 1)) * time.Millisecond)
		defer tick.Stop()
		for i := 1; i <= args.N; i++ {
			select {
			case <-ctx.Done():
				return yep.ToolResult{}, ctx.Err()
			case <-tick.C:
			}
			// A host without streaming just gets the final result.
			if err := call.Update(fmt.Sprint(i)); err != nil && !errors.Is(err, sdk.ErrNotAdvertised) {
				return yep.ToolResult{}, err
			}
		}
		return yep.ToolResult{Output: fmt.Sprintf("counted to %d", args.N)}, nil
	})

	// reverse is deferred (never_defer false): a model reaches it through
	// tool_search.
	s.Tool("reverse", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		var args struct {
			Text string `json:"text"`
		}
		if err := call.Bind(&args); err != nil {
			return yep.ToolResult{}, err
		}
		r := []rune(args.Text)
		slices.Reverse(r)
		return yep.ToolResult{Output: string(r)}, nil
	})

	s.OnHook(yep.HookPreToolUse, "*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		if strings.Contains(strings.ToLower(string(h.Args)), "forbidden") {
			return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: fmt.Sprintf("echo: the arguments of %s contain the word \"forbidden\"", h.ToolName)}, nil
		}
		return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
	}, sdk.HookOptions{TimeoutMS: 500, OnError: yep.HookOnErrorWarn})

	s.Prompt(Prompt)

	s.Command("greet", "Greet someone: /echo:greet <name>", func(ctx context.Context, args string) (yep.CommandExecuteResult, error) {
		name := strings.TrimSpace(args)
		if name == "" {
			name = "world"
		}
		return yep.CommandExecuteResult{Success: true, Message: "hello, " + name}, nil
	})
	return s
}
