package wasm_test

import (
	"path/filepath"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/transporttest/conformance"
	"yolop.dev/transport/wasm"
)

// TestConformance runs the shared transport suite against the WASM
// transport, with every behaviour served by one guest (internal/confguest).
// Guests run in-process: their PID is 0.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Suite{
		Transport: newTransport(t, wasm.Options{}),
		Spec: func(b string) core.ServerSpec {
			if b == conformance.Missing {
				return core.ServerSpec{Name: "conf-missing", Command: filepath.Join(buildDir, "no-such-module.wasm")}
			}
			return core.ServerSpec{Name: "conf-" + b, Command: confWasm, Args: []string{b}}
		},
	})
}
