package main

import "context"

// signalContext is ctx as it is: a wasip1 guest gets no signals, and on
// wasip1 the os/signal package waits for them in a loop that never
// sleeps (the runtime's notetsleepg yields and retries), which keeps the
// guest's scheduler from ever polling stdin.
func signalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}
