package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/text/width"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/settings"
)

// boardSession starts a session over grants alone (no enabled
// extensions, no built-ins) in a fresh config directory.
func boardSession(t *testing.T, grants ...host.Grant) *harness.Session {
	t.Helper()
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := h.NewSession(ctx, harness.SessionOptions{Extra: grants, NoEnabled: true, NoBuiltins: true, WorkspaceRoot: t.TempDir()})
	t.Cleanup(s.Close)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// statusGrant is the grant of a package whose server is
// testdata/status.py: its tool "status" pushes status/changed. A
// non-empty extra names a tool its handshake serves beyond the manifest.
func statusGrant(t *testing.T, name, extra string) host.Grant {
	t.Helper()
	script, err := filepath.Abs("testdata/status.py")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{
		"name": name, "version": "0.1.0", "description": "Pushes status text for tests.",
		"yolop": map[string]any{
			"protocol_version": "1.0",
			"capabilityServer": map[string]any{"command": "python3", "args": []string{"-u", script}, "env": map[string]string{"STATUS_EXTRA_TOOL": extra}},
			"status":           true,
			// The server is a script outside its package: its sandbox says so.
			"sandbox": map[string]any{"fs": []map[string]string{{"path": "${workspace}", "access": "rw"}, {"path": script}}},
			"tools": []map[string]any{{
				"name": "status", "description": "Set the status text.",
				"input_schema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
			}},
		},
	}
	raw, _ := json.Marshal(m)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, g, _, err := harness.InPlace(dir)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// watchedBoard makes a board over s whose onChange signals the returned
// channel and counts its calls.
func watchedBoard(t *testing.T, s *host.Session, model string, window int) (*harness.StatusBoard, <-chan struct{}, *atomic.Int64) {
	t.Helper()
	ch := make(chan struct{}, 1)
	var calls atomic.Int64
	b := harness.NewStatusBoard(s, model, window, func() {
		calls.Add(1)
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	t.Cleanup(b.Close)
	return b, ch, &calls
}

// waitBoard waits, woken by onChange, until the board's snapshot
// satisfies cond, and returns it. The guard only turns a hang into a
// failure that shows the board.
func waitBoard(t *testing.T, b *harness.StatusBoard, changed <-chan struct{}, what string, cond func(harness.StatusSnapshot) bool) harness.StatusSnapshot {
	t.Helper()
	guard := time.After(2 * time.Minute)
	for {
		snap := b.Snapshot()
		if cond(snap) {
			return snap
		}
		select {
		case <-changed:
		case <-guard:
			t.Fatalf("no change brought %s; the board shows %+v", what, snap)
		}
	}
}

func extStatus(snap harness.StatusSnapshot, name string) harness.ExtensionStatus {
	for _, e := range snap.Extensions {
		if e.Name == name {
			return e
		}
	}
	return harness.ExtensionStatus{}
}

func callStatus(t *testing.T, s *harness.Session, text string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"text": text})
	if _, err := s.CallTool(context.Background(), "status", "", args, nil); err != nil {
		t.Fatalf("status %q: %v", text, err)
	}
}

// A server's status/changed text reaches the board (onChange says so),
// and an empty text clears it; extensions come in session order.
func TestStatusBoardStatusText(t *testing.T) {
	s := boardSession(t, statusGrant(t, "lsp", ""), statusGrant(t, "other", ""))
	b, changed, calls := watchedBoard(t, s.Session, "", 0)
	if got := b.Snapshot().Extensions; len(got) != 2 || got[0].Name != "lsp" || got[1].Name != "other" || got[0].Health != "idle" {
		t.Fatalf("extensions before any call = %+v, want lsp then other, idle", got)
	}

	callStatus(t, s, "degraded: rust-analyzer not found\n\x1b[31m")
	snap := waitBoard(t, b, changed, "lsp's status text", func(s harness.StatusSnapshot) bool {
		return extStatus(s, "lsp").Text != ""
	})
	if got := extStatus(snap, "lsp"); got.Text != "degraded: rust-analyzer not found [31m" || got.Health != "ready" {
		t.Errorf("lsp = %+v, want ready with its text on one line, the escape dropped", got)
	}
	if calls.Load() == 0 {
		t.Error("onChange was not called")
	}
	if line := snap.Line(80); !strings.Contains(line, "lsp ready: degraded: rust-analyzer not found") {
		t.Errorf("Line(80) = %q, want lsp's text", line)
	}

	callStatus(t, s, "")
	waitBoard(t, b, changed, "lsp's text cleared", func(s harness.StatusSnapshot) bool {
		return extStatus(s, "lsp").Text == ""
	})
}

// An extension whose server binary does not exist shows degraded, with
// the reason; one whose handshake served more than its manifest shows
// refused.
func TestStatusBoardDegradedAndRefused(t *testing.T) {
	ghost := host.Grant{
		Name: "ghost", ProtocolVersion: "1.0",
		Server: core.ServerSpec{Name: "ghost", Command: filepath.Join(t.TempDir(), "no-such-server")},
		Tools:  []host.ToolGrant{{Name: "haunt", NeverDefer: true}},
	}
	s := boardSession(t, ghost, statusGrant(t, "wide", "extra"))
	b, changed, _ := watchedBoard(t, s.Session, "m", 0)

	if _, err := s.CallTool(context.Background(), "haunt", "", json.RawMessage(`{}`), nil); err == nil {
		t.Fatal("calling a tool of a server that does not exist succeeded")
	}
	snap := waitBoard(t, b, changed, "ghost degraded", func(s harness.StatusSnapshot) bool {
		return extStatus(s, "ghost").Health == "degraded"
	})
	if r := extStatus(snap, "ghost").Reason; !strings.Contains(r, "no-such-server") {
		t.Errorf("ghost's reason = %q, want it to name the missing server", r)
	}
	if line := snap.Line(200); !strings.Contains(line, "ghost degraded: ") {
		t.Errorf("Line = %q, want ghost degraded with its reason", line)
	}

	callStatus(t, s, "")
	snap = waitBoard(t, b, changed, "wide refused", func(s harness.StatusSnapshot) bool {
		return extStatus(s, "wide").Health == harness.HealthRefused
	})
	if r := extStatus(snap, "wide").Reason; !strings.Contains(r, "tool extra") {
		t.Errorf("wide's reason = %q, want the refused tool", r)
	}
}

// Running counts a streaming call while it runs and drops back to 0 when
// it ends.
func TestStatusBoardRunning(t *testing.T) {
	_, echo, _, err := harness.InPlace(echotest.Package(t))
	if err != nil {
		t.Fatal(err)
	}
	s := boardSession(t, echo)
	b, changed, _ := watchedBoard(t, s.Session, "m", 0)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, "count", "", json.RawMessage(`{"n":100000,"delay_ms":1}`), nil)
		done <- err
	}()
	snap := waitBoard(t, b, changed, "one call running", func(s harness.StatusSnapshot) bool { return s.Running == 1 })
	if line := snap.Line(80); !strings.HasSuffix(line, "1 running") {
		t.Errorf("Line(80) = %q, want it to end in the running count", line)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled count succeeded")
	}
	waitBoard(t, b, changed, "no call running", func(s harness.StatusSnapshot) bool { return s.Running == 0 })
}

// Context use is the input tokens of the latest llm.generation; Close
// ends the subscription: later events change nothing and no goroutine is
// left.
func TestStatusBoardContextAndClose(t *testing.T) {
	s := boardSession(t)
	ignore := goleak.IgnoreCurrent()
	ch := make(chan struct{}, 1)
	b := harness.NewStatusBoard(s.Session, "openai/gpt-4.1", 128000, func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	s.Emit(host.Event{Type: yep.TraceLLMGeneration, Data: yep.LLMGenerationData{Model: "gpt-4.1", InputTokens: 12345, OutputTokens: 7}})
	snap := waitBoard(t, b, ch, "the context use", func(s harness.StatusSnapshot) bool { return s.ContextUsed != 0 })
	if snap.ContextUsed != 12345 || snap.ContextWindow != 128000 || snap.Model != "openai/gpt-4.1" {
		t.Errorf("snapshot = %+v, want 12345 of 128000 tokens on openai/gpt-4.1", snap)
	}
	if got := snap.Line(80); got != "openai/gpt-4.1 12.3k/128k" {
		t.Errorf("Line(80) = %q", got)
	}

	// MCP servers' state is read from its source at each Snapshot; a
	// model switch shows at once.
	b.SetMCP(func() []harness.MCPState {
		return []harness.MCPState{{Name: "github", State: "ready"}, {Name: "slack\n", State: "degraded"}}
	})
	b.SetModel("anthropic/claude", 200000)
	snap = b.Snapshot()
	if len(snap.MCP) != 2 || snap.MCP[1] != (harness.MCPState{Name: "slack", State: "degraded"}) {
		t.Errorf("MCP = %+v, want github and slack (its name on one line)", snap.MCP)
	}
	if got := snap.Line(80); got != "anthropic/claude 12.3k/200k · mcp github ready · mcp slack degraded" {
		t.Errorf("Line(80) = %q", got)
	}
	if got := snap.Line(50); got != "anthropic/claude 12.3k/200k · mcp slack degraded" {
		t.Errorf("Line(50) = %q, want the degraded MCP server kept over the ready one", got)
	}
	b.SetMCP(nil)
	if got := b.Snapshot().MCP; got != nil {
		t.Errorf("MCP with no source = %+v", got)
	}

	b.Close()
	b.Close() // idempotent
	s.Emit(host.Event{Type: yep.TraceLLMGeneration, Data: yep.LLMGenerationData{InputTokens: 99999}})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.Snapshot().ContextUsed; got != 12345 {
		t.Errorf("after Close an event changed the context use to %d", got)
	}
	goleak.VerifyNone(t, ignore)
}

// Line fits the width, cutting the least important parts first.
func TestStatusSnapshotLine(t *testing.T) {
	full := harness.StatusSnapshot{
		Model: "openai/gpt-4.1", ContextUsed: 12300, ContextWindow: 128000,
		Extensions: []harness.ExtensionStatus{
			{Name: "echo", Health: "ready"},
			{Name: "lsp", Health: "degraded", Reason: "rust-analyzer not found"},
			{Name: "git", Health: "ready", Text: "main +2"},
		},
		MCP:     []harness.MCPState{{Name: "github", State: "connected"}},
		Running: 1,
	}
	wide := harness.StatusSnapshot{
		Model:      "模型",
		Extensions: []harness.ExtensionStatus{{Name: "检查", Health: "degraded", Reason: "服务器没有找到可执行文件"}},
	}
	for _, tc := range []struct {
		name  string
		snap  harness.StatusSnapshot
		width int
		want  string
	}{
		{"all fits", full, 140, "openai/gpt-4.1 12.3k/128k · echo ready · lsp degraded: rust-analyzer not found · git ready: main +2 · mcp github connected · 1 running"},
		{"100 cuts healthy parts, then the running count", full, 100, "openai/gpt-4.1 12.3k/128k · lsp degraded: rust-analyzer not found · git ready: main +2 · +3"},
		{"80 cuts status texts after the degraded", full, 80, "openai/gpt-4.1 12.3k/128k · lsp degraded: rust-analyzer not found · +4"},
		{"40 keeps the model", full, 40, "openai/gpt-4.1 12.3k/128k · +5"},
		{"20 shortens the model", full, 20, "openai/gpt-4.1 12.3…"},
		{"no model", harness.StatusSnapshot{Extensions: []harness.ExtensionStatus{{Name: "echo", Health: "idle"}}}, 20, "echo idle"},
		{"empty", harness.StatusSnapshot{}, 20, ""},
		{"zero width", full, 0, ""},
		{"shortened no further than needed", full, 60, "openai/gpt-4.1 12.3k/128k · lsp degraded: rust-analyze… · +4"},
		{"wide runes fit", wide, 46, "模型 · 检查 degraded: 服务器没有找到可执行文件"},
		{"wide runes at 30", wide, 30, "模型 · 检查 degraded: 服务器…"},
		{"wide runes at 29", wide, 29, "模型 · 检查 degraded: 服务器…"},
		{"a wide rune is not split", wide, 28, "模型 · 检查 degraded: 服务…"},
		{"wide model at 3", wide, 3, "模…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.snap.Line(tc.width)
			if got != tc.want {
				t.Errorf("Line(%d) = %q, want %q", tc.width, got, tc.want)
			}
			if n := cols(got); n > tc.width {
				t.Errorf("Line(%d) takes %d columns", tc.width, n)
			}
		})
	}
	// No width overflows, whatever the width.
	for w := range 130 {
		for _, snap := range []harness.StatusSnapshot{full, wide} {
			if n := cols(snap.Line(w)); n > w {
				t.Errorf("Line(%d) = %q takes %d columns", w, snap.Line(w), n)
			}
		}
	}
}

// cols counts terminal columns independently of the code under test: wide
// and full-width runes two, others one.
func cols(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

// An enabled extension the session did not start (here one that is not
// installed) is in Session.KeptOff with its reason, and on the board after
// the session's own extensions once SetKeptOff gives it; a kept-off entry
// whose name runs in the session is not shown twice.
func TestStatusBoardKeptOff(t *testing.T) {
	ctx := context.Background()
	cfg := t.TempDir()
	if _, err := settings.New(cfg).Enable(ctx, "ghost"); err != nil {
		t.Fatal(err)
	}
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	_, echo, _, err := harness.InPlace(echotest.Package(t))
	if err != nil {
		t.Fatal(err)
	}
	s, warns := h.NewSession(ctx, harness.SessionOptions{Extra: []host.Grant{echo}, NoBuiltins: true, WorkspaceRoot: t.TempDir()})
	t.Cleanup(s.Close)
	kept := s.KeptOff()
	if len(kept) != 1 || kept[0].Name != "ghost" || kept[0].Health != "off" || !strings.Contains(kept[0].Reason, "not installed") {
		t.Fatalf("KeptOff = %+v (warnings %q), want ghost off: not installed", kept, warns)
	}
	b, _, _ := watchedBoard(t, s.Session, "", 0)
	b.SetKeptOff(append(kept, harness.ExtensionStatus{Name: "echo", Health: "blocked", Reason: "not this one"}))
	snap := b.Snapshot()
	var names []string
	for _, e := range snap.Extensions {
		names = append(names, e.Name+" "+e.Health)
	}
	if strings.Join(names, ",") != "echo idle,ghost off" {
		t.Fatalf("board extensions = %v, want the session's echo then ghost off", names)
	}
	if line := snap.Line(200); !strings.Contains(line, "ghost off: ") || !strings.Contains(line, "not installed") {
		t.Fatalf("line %q does not show ghost kept off with its reason", line)
	}
}
