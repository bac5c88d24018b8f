package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"yolop.dev/core/yep"
)

// TestSDKEchoThroughSession drives the SDK-built echo example as a real
// subprocess through every seam the session offers.
func TestSDKEchoThroughSession(t *testing.T) {
	g := echoGrant(t, "echo")
	// The manifest's 500 ms would let a loaded machine turn the hook's
	// block into a timeout, which fails open (on_error warn): bound it by
	// the test's deadline instead.
	g.Hooks[0].TimeoutMS = 0
	s := newTestSession(t, SessionOptions{Grants: []Grant{g}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.BeginTurn(context.Background())
	var updates []string
	res, err := s.CallTool(context.Background(), "count", "c1", json.RawMessage(`{"n":4,"delay_ms":1}`), func(u yep.ToolUpdateParams) {
		updates = append(updates, u.Output)
	})
	if err != nil || res.Output != "counted to 4" || strings.Join(updates, ",") != "1,2,3,4" {
		t.Fatalf("count = %+v, %v, updates %v", res, err, updates)
	}
	_, err = s.CallTool(context.Background(), "echo", "c2", json.RawMessage(`{"text":"forbidden"}`), nil)
	var hb *HookBlockedError
	if !errors.As(err, &hb) || hb.Capability != "ext:echo" {
		t.Fatalf("hook did not block: %v", err)
	}
	cr, err := s.ExecuteCommand(context.Background(), "echo:greet", "tester")
	if err != nil || cr.Message != "hello, tester" {
		t.Fatalf("greet = %+v, %v", cr, err)
	}
	if p := s.SystemPrompt(context.Background(), "base"); !strings.Contains(p, "The echo extension is installed") {
		t.Fatalf("prompt = %q", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, "count", "c3", json.RawMessage(`{"n":100000,"delay_ms":5}`), func(yep.ToolUpdateParams) { cancel() })
		done <- err
	}()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled count = %v", err)
	}
	res, err = s.CallTool(context.Background(), "echo", "c4", json.RawMessage(`{"text":"after cancel"}`), nil)
	if err != nil || res.Output != "after cancel" {
		t.Fatalf("after cancel = %+v, %v", res, err)
	}
	s.EndTurn()
	st := s.Stats()[0]
	if st.Calls != 3 || st.HookDecisions["block"] != 1 || st.P50 <= 0 {
		t.Fatalf("stats = %+v", st)
	}
}
