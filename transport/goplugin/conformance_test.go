package goplugin_test

import (
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/transporttest/conformance"
)

// TestConformance runs the shared transport suite against the go-plugin
// transport, with the test plugin serving every behaviour over the YEP
// stream.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Suite{
		Transport: newTransport(nil),
		Spec: func(b string) core.ServerSpec {
			if b == conformance.Missing {
				s := spec("conf-missing", "conf", b)
				s.Command = "yolop-no-such-plugin"
				return s
			}
			return spec("conf-"+b, "conf", b)
		},
		Processes: true,
	})
}
