// Command yolop is the yolop extension host: it installs, approves, runs
// and talks to capability servers, and offers a line REPL (`yolop session`)
// until a TUI exists.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"yolop.dev/transport/stdio/confine"
)

// version is set at link time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	// A confined server starts as this binary re-executed: Init applies
	// the sandbox and execs the server, and returns at once otherwise.
	confine.Init()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
