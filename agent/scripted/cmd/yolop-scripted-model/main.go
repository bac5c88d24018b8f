// Command yolop-scripted-model is the scripted model's capability server
// (yolop.dev/agent/scripted/scriptedext) over stdio: the server of the
// package in agent/scripted/package. Its script is the config's "script",
// else the one embedded here, which answers every message with a short
// greeting.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"yolop.dev/agent/scripted/scriptedext"
)

// defaultScript answers any request, as often as asked.
//
//go:embed default.json
var defaultScript []byte

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := scriptedext.New(scriptedext.Options{Script: defaultScript}).Serve(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "yolop-scripted-model:", err)
		os.Exit(1)
	}
}
