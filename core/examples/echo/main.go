// Command yolop-extension-echo is the reference capability server built on
// the Go author SDK ([yolop.dev/core/sdk]). It exercises every facet an
// extension commonly uses:
//
//   - echo: a plain tool that returns its "text" argument;
//   - count: a streaming tool that emits n tool/update notifications, one
//     every "delay_ms" (default 10), and stops as soon as the call is
//     cancelled;
//   - reverse: a deferred tool (never_defer false) that returns its
//     "text" argument reversed, which a model finds with tool_search;
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
// package). The same source builds as a WebAssembly guest for the wasm
// transport (yolop.dev/transport/wasm):
//
//	GOOS=wasip1 GOARCH=wasm go build -o echo.wasm ./core/examples/echo
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/examples/echo/echoext"
)

func main() {
	ctx, stop := signalContext(context.Background())
	defer stop()
	if err := run(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "yolop-extension-echo:", err)
		os.Exit(1)
	}
}

// run serves the protocol over stdin and stdout until the host says exit
// or closes stdin.
func run(ctx context.Context, stderr io.Writer) error {
	s := echoext.New(hclog.New(&hclog.LoggerOptions{Name: "echo", Output: stderr, Level: hclog.LevelFromString(os.Getenv("ECHO_LOG"))}))
	if err := s.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
