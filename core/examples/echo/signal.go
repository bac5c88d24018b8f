//go:build !wasip1

package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// signalContext is cancelled by SIGINT or SIGTERM.
func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
