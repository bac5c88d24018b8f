// Command yolop is the yolop extension host: it installs, approves, runs
// and talks to capability servers, and offers a line REPL (`yolop session`)
// until a TUI exists.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// version is set at link time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
