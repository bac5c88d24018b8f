// Command yolop-extension-logfire is the logfire extension's capability
// server: it exports a yolop session's trace events as OpenTelemetry spans
// over OTLP/HTTP (see package yolop.dev/extensions/logfire).
//
// Build it into the package's bin/ so the host finds the bare command:
//
//	go build -o extensions/logfire/package/bin/yolop-extension-logfire ./extensions/logfire/cmd/yolop-extension-logfire
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

	"yolop.dev/extensions/logfire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "yolop-extension-logfire:", err)
		os.Exit(1)
	}
}

// run serves the protocol over stdin and stdout until the host says exit
// or closes stdin, then flushes.
func run(ctx context.Context, stderr io.Writer) error {
	log := hclog.New(&hclog.LoggerOptions{Name: "logfire", Output: stderr, Level: hclog.LevelFromString(os.Getenv("LOGFIRE_LOG"))})
	s := logfire.New(logfire.Options{Logger: log})
	if err := s.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
