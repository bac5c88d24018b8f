// Command yolop-extension-guardrail is the guardrail reference extension:
// a pre_tool_use hook on the built-in write_file, edit_file and bash tools
// that blocks a call writing to a file marked "Code generated … DO NOT
// EDIT.", with a reason that tells the agent to change the file's source
// and regenerate it instead (see [yolop.dev/core/examples/guardrail/guardrailext]).
//
// The package manifest sits beside this file as plugin.json. Build the
// server into the package's bin/, where the host looks for the bare
// capabilityServer.command first, then install the package:
//
//	go build -o core/examples/guardrail/bin/yolop-extension-guardrail ./core/examples/guardrail
//	yolop ext install ./core/examples/guardrail
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/examples/guardrail/guardrailext"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "yolop-extension-guardrail:", err)
		os.Exit(1)
	}
}

// run serves the protocol over stdin and stdout until the host says exit
// or closes stdin.
func run(ctx context.Context, stderr io.Writer) error {
	s := guardrailext.New(hclog.New(&hclog.LoggerOptions{Name: "guardrail", Output: stderr, Level: hclog.LevelFromString(os.Getenv("GUARDRAIL_LOG"))}))
	if err := s.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
