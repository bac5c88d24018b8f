// Command yolop-extension-echo is the reference capability server built on
// the Go author SDK ([yolop.dev/core/sdk]). It exercises every facet an
// extension commonly uses:
//
//   - echo: a plain tool that returns its "text" argument;
//   - count: a streaming tool that emits n tool/update notifications, one
//     every "delay_ms" (default 10), and stops as soon as the call is
//     cancelled;
//   - a pre_tool_use hook on every tool ("*") that blocks a call whose
//     arguments contain the word "forbidden" and allows the others;
//   - a static system-prompt contribution;
//   - the slash command greet (shown as "echo:greet").
//
// The package manifest sits beside this file as plugin.json. Its
// capabilityServer.command is the bare name "yolop-extension-echo", which
// the host resolves from the package's bin/ directory first and then from
// PATH; build the server into the package with
//
//	go build -o core/examples/echo/bin/yolop-extension-echo ./core/examples/echo
//
// (the integration test does the same into a temporary copy of the
// package).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// Version is the server version, set at link time with
// -ldflags "-X main.Version=…".
var Version = "0.1.0"

// Prompt is the static system-prompt contribution.
const Prompt = "The echo extension is installed: call the echo tool to repeat text and count to watch streamed progress."

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "yolop-extension-echo:", err)
		os.Exit(1)
	}
}

// run serves the protocol over stdin and stdout until the host says exit
// or closes stdin.
func run(ctx context.Context, stderr io.Writer) error {
	s := newServer(hclog.New(&hclog.LoggerOptions{Name: "echo", Output: stderr, Level: hclog.LevelFromString(os.Getenv("ECHO_LOG"))}))
	if err := s.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// newServer registers every handler of the echo extension.
func newServer(log hclog.Logger) *sdk.Server {
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

	s.OnHook(yep.HookPreToolUse, "*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		if strings.Contains(strings.ToLower(string(h.Args)), "forbidden") {
			return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: fmt.Sprintf("echo: the arguments of %s contain the word \"forbidden\"", h.ToolName)}, nil
		}
		return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
	}, sdk.HookOptions{TimeoutMS: 500, OnError: "warn"})

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
