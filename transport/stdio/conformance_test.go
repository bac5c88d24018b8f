//go:build linux

package stdio_test

import (
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/transporttest/conformance"
	"yolop.dev/transport/stdio"
)

// conformanceEnv makes a re-executed test binary play a behaviour of the
// shared transport suite.
const conformanceEnv = "YOLOP_STDIO_CONFORMANCE"

// TestConformance runs the shared transport suite against the stdio
// transport, with this test binary as every behaviour's server (and, under
// TestSuiteInOtherModes, in every PID-namespace mode).
func TestConformance(t *testing.T) {
	bin := testBinary(t)
	conformance.Run(t, conformance.Suite{
		Transport: stdio.New(stdio.Options{TermGrace: 100 * time.Millisecond}),
		Spec: func(b string) core.ServerSpec {
			if b == conformance.Missing {
				return core.ServerSpec{Name: "conf-missing", Command: "yolop-conformance-no-such-server"}
			}
			return core.ServerSpec{Name: "conf-" + b, Command: bin,
				Env: map[string]string{conformanceEnv: b, "GORACE": "atexit_sleep_ms=0"}}
		},
		Processes: true,
	})
}
