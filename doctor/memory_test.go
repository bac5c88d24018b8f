package doctor_test

import (
	"context"
	"io"
	"testing"

	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/core/transporttest"
	"yolop.dev/doctor"
)

// The doctor grades a server whatever transport runs it: here the echo
// example's server in-process, over core/transporttest's pipes, with no
// process at all. Every check passes as it does over stdio.
func TestRunGradesAServerOnAnyTransport(t *testing.T) {
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{
		"echo": func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
			return echoext.New(nil).ServeConn(ctx, stdin, stdout)
		},
	}}
	rep, err := doctor.Run(context.Background(), "../core/examples/echo", doctor.Options{Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	mustPass(t, rep)
	if len(rep.Checks) < 10 {
		t.Fatalf("only %d checks ran", len(rep.Checks))
	}
}
