package host

import (
	"context"
	"sync"

	"yolop.dev/core/yep"
)

// askGate lets one ui/ask prompt be live at a time: a second concurrent
// question is answered cancelled at once, and with no sink every question
// is answered cancelled, so a server never hangs on the user.
type askGate struct {
	sink AskSink
	// notify, if set, is told each question before the user is asked
	// (the session fires notification hooks).
	notify func(ctx context.Context, ext, question string)
	mu     sync.Mutex
	busy   bool
}

func (g *askGate) ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	if g == nil || g.sink == nil {
		return yep.UIAskResult{Cancelled: true}, nil
	}
	g.mu.Lock()
	if g.busy {
		g.mu.Unlock()
		return yep.UIAskResult{Cancelled: true}, nil
	}
	g.busy = true
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.busy = false
		g.mu.Unlock()
	}()
	if g.notify != nil {
		g.notify(ctx, ext, p.Prompt)
	}
	res, err := g.sink.Ask(ctx, ext, p)
	if err != nil {
		return yep.UIAskResult{Cancelled: true}, nil
	}
	return res, nil
}
