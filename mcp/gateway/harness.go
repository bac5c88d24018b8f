package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"

	"yolop.dev/harness"
)

// HarnessOptions configure [ServeHarness]. The zero value serves the
// enabled extensions over stdio.
type HarnessOptions struct {
	// Options configure the gateway. A nil Logger means the harness's.
	Options
	// InPlace are package directories served beside the enabled
	// extensions, loaded in place (yolop mcp serve --ext).
	InPlace []string
	// NoEnabled leaves out the extensions enabled in settings.toml.
	NoEnabled bool
	// Listener, if set, is served streamable HTTP at /mcp, behind Token
	// when it is not empty (see [Gateway.ServeHTTPOn]). Nil serves one
	// client over stdin and stdout (see [Gateway.ServeStdio]).
	Listener net.Listener
	Token    string
	// Warn hears each extension, server or tool that could not be loaded
	// or served; the gateway serves the rest. Nil drops them.
	Warn func(string)
}

// ServeHarness serves, through a new gateway, the extension tools of a
// session h opens over the enabled extensions and o.InPlace (no
// built-ins; questions an extension asks go to the client), until ctx ends
// or, over stdio, the client leaves. A package in o.InPlace that cannot be
// loaded is the error; an extension that fails to start is a warning.
func ServeHarness(ctx context.Context, h *harness.Harness, o HarnessOptions) error {
	if o.Logger == nil {
		o.Logger = h.Logger()
	}
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	g := New(o.Options)
	defer g.Close()
	s, warnings, err := h.OpenSession(ctx, harness.SessionOptions{NoBuiltins: true, NoEnabled: o.NoEnabled, Ask: g}, o.InPlace)
	if err != nil {
		return fmt.Errorf("loading a package in place: %w", err)
	}
	defer s.Close()
	if err := s.Start(ctx); err != nil {
		warnings = append(warnings, err.Error())
	}
	warnings = append(warnings, s.Warnings()...)
	for _, w := range append(warnings, g.Attach(s.Session)...) {
		warn(w)
	}
	if o.Listener != nil {
		return g.ServeHTTPOn(ctx, o.Listener, o.Token)
	}
	if err := g.ServeStdio(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
