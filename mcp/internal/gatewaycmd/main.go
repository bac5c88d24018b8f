// Command gatewaycmd serves the package in the directory its argument
// names through the MCP gateway over stdio, as `yolop mcp serve --ext DIR
// --no-enabled` does, for the gateway benchmark. Its config directory is
// a temporary one, so no user's settings or secrets are read.
package main

import (
	"context"
	"fmt"
	"os"

	"yolop.dev/harness"
	"yolop.dev/mcp/gateway"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gatewaycmd:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	cfg, err := os.MkdirTemp("", "gatewaycmd-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cfg)
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		return err
	}
	return gateway.ServeHarness(ctx, h, gateway.HarnessOptions{InPlace: []string{dir}, NoEnabled: true,
		Warn: func(w string) { fmt.Fprintln(os.Stderr, "gatewaycmd: warning:", w) }})
}
