package host

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"yolop.dev/core/yep"
)

// fakeContributed is a ContributedTools that serves one tool per
// extension it was last told about, as the MCP client does.
type fakeContributed struct {
	Base
	mu     sync.Mutex
	exts   []string
	syncs  int
	closed bool
}

func (f *fakeContributed) Name() string { return "mcp" }
func (f *fakeContributed) Tools() []ToolDef {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []ToolDef{{Name: "mcp__static__always", NeverDefer: true}}
	for _, e := range f.exts {
		out = append(out, ToolDef{Name: "mcp__" + e + "__tool", Description: "a contributed tool"})
	}
	return out
}
func (f *fakeContributed) CallTool(_ context.Context, call ToolCall, _ func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	return yep.ToolResult{Output: "called " + call.Name}, nil
}
func (f *fakeContributed) Sync(_ context.Context, exts []*Extension) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	var now []string
	for _, e := range exts {
		now = append(now, e.ExtName())
	}
	changed := !slices.Equal(now, f.exts)
	f.exts = now
	return changed
}
func (f *fakeContributed) Warnings() []string { return []string{"a contributed warning"} }
func (f *fakeContributed) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

// TestContributedTools pins the seam the MCP client plugs into: Sync at
// Start and at every turn boundary, its tools
// deferred unless NeverDefer, callable by name, its warnings in the
// session's, and Close with the session.
func TestContributedTools(t *testing.T) {
	f := &fakeContributed{}
	s := newTestSession(t, SessionOptions{Grants: []Grant{echoGrant(t, "echo")}, Contributed: []ContributedTools{f}})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	tools := map[string]ToolInfo{}
	for _, ti := range s.Tools() {
		tools[ti.Name] = ti
	}
	if ti, ok := tools["mcp__echo__tool"]; !ok || !ti.Deferred || ti.Capability != "mcp" {
		t.Fatalf("contributed tool = %+v (%v)", ti, ok)
	}
	if ti := tools["mcp__static__always"]; ti.Deferred {
		t.Fatalf("never_defer contributed tool is deferred: %+v", ti)
	}
	if _, ok := tools["tool_search"]; !ok {
		t.Fatal("no tool_search for the deferred contributed tool")
	}
	res, err := s.CallTool(context.Background(), "mcp__echo__tool", "c1", json.RawMessage(`{}`), nil)
	if err != nil || res.Output != "called mcp__echo__tool" {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if !slices.Contains(s.Warnings(), "a contributed warning") {
		t.Fatalf("warnings = %v", s.Warnings())
	}
	s.Deactivate("echo")
	s.BeginTurn(context.Background())
	for _, ti := range s.Tools() {
		if ti.Name == "mcp__echo__tool" {
			t.Fatal("the disabled extension's contributed tool survived the turn boundary")
		}
	}
	s.BeginTurn(context.Background())
	f.mu.Lock()
	syncs := f.syncs
	f.mu.Unlock()
	if syncs != 3 {
		t.Fatalf("syncs = %d, want 3 (start and each turn)", syncs)
	}
	s.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		t.Fatal("session close did not close the contributed capability")
	}
}
