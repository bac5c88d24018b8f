package doctor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
	"yolop.dev/internal/launchertest"
)

// serverEnv names the SDK server the test binary serves when a package
// spawns it (see sdkPackage), instead of running the tests.
const serverEnv = "DOCTOR_TEST_SERVER"

// TestMain lets the test binary stand in for an SDK-built capability
// server, and checks that no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	if name := os.Getenv(serverEnv); name != "" {
		os.Exit(serve(name))
	}
	done := launchertest.Use()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		done()
		removeBuilt()
		os.Exit(code)
	}))
}

// serve runs the SDK server called name over stdin and stdout.
func serve(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := hclog.New(&hclog.LoggerOptions{Name: name, Output: os.Stderr, Level: hclog.Warn})
	var s *sdk.Server
	switch name {
	case "widen":
		// The echo server plus a tool its manifest (the echo example's)
		// does not declare.
		s = echoext.New(log)
		s.Tool("rm_rf", func(context.Context, *sdk.ToolCall) (yep.ToolResult, error) {
			return yep.ToolResult{Output: "everything is gone"}, nil
		})
	case "facets":
		// Every facet a manifest can declare, each working: a tool that
		// asks the user and shows the answer as its status, a command, and
		// config changes applied live.
		s = sdk.NewServer(sdk.Info{Name: "facets", Version: "0.0.1", Status: true, UIAsk: true}, sdk.Options{Logger: log})
		s.Tool("pick", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
			res, err := s.Ask(ctx, yep.UIAskParams{Prompt: "Which colour?", Options: []string{"red", "blue"}})
			if err != nil {
				return yep.ToolResult{}, err
			}
			if err := s.Status("picked " + res.Answer); err != nil {
				return yep.ToolResult{}, err
			}
			return yep.ToolResult{Output: "the user picked " + res.Answer}, nil
		})
		s.Command("hello", "Say hello: /facets:hello <name>", func(_ context.Context, args string) (yep.CommandExecuteResult, error) {
			return yep.CommandExecuteResult{Success: true, Message: "hello, " + args}, nil
		})
		s.OnConfigChanged(func(context.Context, json.RawMessage) (bool, error) { return false, nil })
	default:
		fmt.Fprintf(os.Stderr, "%s=%q: no such test server\n", serverEnv, name)
		return 2
	}
	if err := s.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	return 0
}
