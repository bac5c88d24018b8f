package repl_test

import (
	"context"
	"strings"
	"testing"

	"yolop.dev/harness/repl"
	"yolop.dev/transport/stdio/confine"
)

// /status says what this machine enforces of an extension's sandbox and
// where its rules come from, in its text and its fields.
func TestStatusShowsSandbox(t *testing.T) {
	restore := confine.SetKernelABIForTesting(0)
	defer restore()
	_, s := session(t)
	out := &recorder{}
	r := repl.New(repl.Options{Session: s.Session, Out: out})
	defer r.Close()
	r.Run(context.Background(), "/status")
	ev, _ := out.take()
	const want = "unsandboxed (kernel has no Landlock); rules from the default"
	if len(ev) != 1 || ev[0].fields["sandbox"] != want || !strings.Contains(ev[0].text, "\n  sandbox: "+want) {
		t.Fatalf("/status = %+v, want the sandbox state %q", ev, want)
	}
}
