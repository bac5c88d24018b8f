package transporttest_test

import (
	"context"
	"io"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/transporttest"
	"yolop.dev/core/transporttest/conformance"
)

// TestConformance runs the shared transport suite against the in-memory
// transport: each behaviour is a Server, its exit status an ExitError.
func TestConformance(t *testing.T) {
	servers := map[string]transporttest.Server{}
	for name, b := range conformance.Behaviours() {
		servers["conf-"+name] = func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
			if code := b(ctx, stdin, stdout, transporttest.Stderr(ctx)); code != 0 {
				return &core.ExitError{Code: code}
			}
			return nil
		}
	}
	conformance.Run(t, conformance.Suite{
		Transport: &transporttest.Transport{Servers: servers},
		Spec:      func(b string) core.ServerSpec { return core.ServerSpec{Name: "conf-" + b} },
	})
}
