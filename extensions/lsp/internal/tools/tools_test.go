package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"yolop.dev/extensions/lsp/internal/lsptest"
	"yolop.dev/extensions/lsp/internal/manager"
	"yolop.dev/extensions/lsp/internal/protocol"
)

func TestMain(m *testing.M) {
	lsptest.PutGoplsOnPath()
	goleak.VerifyTestMain(m)
}

// newService runs a manager on a fresh copy of the gomod fixture.
func newService(t *testing.T, encs ...protocol.Encoding) (*Service, string) {
	t.Helper()
	lsptest.RequireGopls(t)
	root := lsptest.Fixture(t, "gomod")
	cfg, err := manager.ParseConfig(json.RawMessage(`{"diagnostics_wait_ms": 20000}`))
	if err != nil {
		t.Fatal(err)
	}
	var svc *Service
	m := manager.New(root, cfg, manager.Options{
		BackoffBase:  20 * time.Millisecond,
		ScanInterval: time.Nanosecond,
		Encodings:    encs,
		ApplyEdit: func(ctx context.Context, h *manager.Handle, we protocol.WorkspaceEdit) protocol.ApplyWorkspaceEditResult {
			return svc.ServerApplyEdit(ctx, h, we)
		},
	})
	svc = New(m, nil)
	t.Cleanup(m.Shutdown)
	return svc, root
}

func args(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

type call func(ctx context.Context, raw json.RawMessage) (string, error)

func mustRun(t *testing.T, f call, a any) string {
	t.Helper()
	out, err := f(context.Background(), args(a))
	if err != nil {
		t.Fatalf("tool failed: %v", err)
	}
	return out
}

func contains(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGopls runs every tool against one warm gopls. Read-only subtests
// come first; the ones that edit files come after, in order.
func TestGopls(t *testing.T) {
	svc, root := newService(t)
	app := filepath.Join(root, "cmd", "app", "main.go")
	uni := filepath.Join(root, "uni", "uni.go")

	t.Run("definition by symbol", func(t *testing.T) {
		out := mustRun(t, svc.Definition, PositionArgs{File: "cmd/app/main.go", Line: 12, Symbol: "Hello"})
		if out != "greet/greet.go:7:6: func Hello(name string) string {" {
			t.Fatalf("definition = %q", out)
		}
	})
	t.Run("definition by column", func(t *testing.T) {
		col := lsptest.Column(t, app, 14, "Shout")
		out := mustRun(t, svc.Definition, PositionArgs{File: app, Line: 14, Column: col})
		contains(t, out, "greet/shout.go:6:6: func Shout(name string) string {")
	})
	t.Run("definition after multibyte characters", func(t *testing.T) {
		col := lsptest.Column(t, uni, 9, "Café")
		if col != 23 {
			t.Fatalf("fixture changed: Café at column %d", col)
		}
		out := mustRun(t, svc.Definition, PositionArgs{File: "uni/uni.go", Line: 9, Column: col})
		if out != `uni/uni.go:5:5: var Café = "crème brûlée"` {
			t.Fatalf("definition = %q", out)
		}
	})
	t.Run("references", func(t *testing.T) {
		out := mustRun(t, svc.References, ReferencesArgs{PositionArgs: PositionArgs{File: "uni/uni.go", Line: 5, Symbol: "Café"}})
		col := lsptest.Column(t, uni, 9, "Café")
		appCol := lsptest.Column(t, app, 15, "Café")
		contains(t, out, "3 references to `Café` in 2 files:",
			"uni/uni.go:5:5: var Café",
			fmt.Sprintf("uni/uni.go:9:%d: /* 🎉 日本語 é */ return Café", col),
			fmt.Sprintf("cmd/app/main.go:15:%d: fmt.Println(uni.Café, uni.Sum())", appCol))
	})
	t.Run("references capped", func(t *testing.T) {
		out := mustRun(t, svc.References, ReferencesArgs{PositionArgs: PositionArgs{File: "greet/greet.go", Line: 7, Symbol: "Hello"}, Limit: 1})
		contains(t, out, "4 references to `Hello` in 3 files; showing the first 1, 3 more not shown")
		if n := strings.Count(out, "\n"); n != 1 {
			t.Fatalf("%d result lines, want 1:\n%s", n, out)
		}
	})
	t.Run("hover", func(t *testing.T) {
		out := mustRun(t, svc.Hover, PositionArgs{File: "cmd/app/main.go", Line: 12, Symbol: "Hello"})
		contains(t, out, "func greet.Hello(name string) string", "Hello returns a greeting for name.")
		if strings.Contains(out, "```") {
			t.Fatalf("markdown fences left in hover:\n%s", out)
		}
	})
	t.Run("document symbols", func(t *testing.T) {
		out := mustRun(t, svc.Symbols, SymbolsArgs{File: "greet/greet.go"})
		contains(t, out, "Function Hello", "— line 7", "Struct Greeter", "\n  Field Prefix", "Greet")
		out = mustRun(t, svc.Symbols, SymbolsArgs{File: "greet/greet.go", Query: "prefix"})
		contains(t, out, "1 symbol in greet/greet.go:", "Field Prefix")
	})
	t.Run("workspace symbols", func(t *testing.T) {
		out := mustRun(t, svc.Symbols, SymbolsArgs{Query: "Shout"})
		if !strings.HasPrefix(out, "1 symbol matching \"Shout\":\nFunction Shout — greet/shout.go:6:6") {
			t.Fatalf("workspace symbols = %q", out)
		}
	})
	t.Run("diagnostics", func(t *testing.T) {
		out := mustRun(t, svc.Diagnostics, DiagnosticsArgs{File: "greet/greet.go"})
		if out != "No problems in greet/greet.go (gopls)." {
			t.Fatalf("clean file: %q", out)
		}
		out = mustRun(t, svc.Diagnostics, DiagnosticsArgs{})
		contains(t, out, "1 problem (1 error) in 1 file:", `greet/tidy.go:4:2: error: "os" imported and not used`)
	})
	t.Run("code actions list", func(t *testing.T) {
		out := mustRun(t, svc.CodeActions, CodeActionsArgs{PositionArgs: PositionArgs{File: "greet/tidy.go", Line: 4, Column: 2}, Kind: "source.organizeImports"})
		contains(t, out, "1. Organize Imports [source.organizeImports]")
	})
	t.Run("argument errors", func(t *testing.T) {
		ctx := context.Background()
		for _, tc := range []struct {
			a    any
			want string
		}{
			{PositionArgs{File: "cmd/app/main.go", Line: 12}, "give column"},
			{PositionArgs{File: "cmd/app/main.go", Line: 12, Symbol: "Nope"}, `"Nope" does not occur on line 12`},
			{PositionArgs{File: "cmd/app/main.go", Line: 400, Column: 1}, "line 400 is past the end"},
			{PositionArgs{File: "cmd/app/main.go", Line: 12, Column: 90}, "column 90 is out of range"},
			{PositionArgs{File: "nope.go", Line: 1, Column: 1}, "file nope.go"},
			{PositionArgs{File: "go.mod", Line: 1, Column: 1}, "no language server is configured"},
			{map[string]any{"file": "cmd/app/main.go", "line": 12, "colum": 3}, `unknown field "colum"`},
		} {
			_, err := svc.Definition(ctx, args(tc.a))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: err %v, want %q", tc.a, err, tc.want)
			}
		}
	})
	t.Run("cancelled call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := svc.References(ctx, args(ReferencesArgs{PositionArgs: PositionArgs{File: "greet/greet.go", Line: 7, Symbol: "Hello"}}))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})

	// From here on the subtests edit the workspace.
	t.Run("diagnostic appears after an edit", func(t *testing.T) {
		shout := filepath.Join(root, "greet", "shout.go")
		orig := read(t, shout)
		if err := os.WriteFile(shout, []byte(strings.Replace(orig, "Hello(name)", "loud(name)", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := mustRun(t, svc.Diagnostics, DiagnosticsArgs{File: "greet/shout.go"})
		contains(t, out, "greet/shout.go:7:", "error: undefined: loud")
		os.WriteFile(shout, []byte(orig), 0o644)
		out = mustRun(t, svc.Diagnostics, DiagnosticsArgs{File: "greet/shout.go", Severity: "error"})
		if out != "No problems in greet/shout.go (gopls)." {
			t.Fatalf("after the fix: %q", out)
		}
	})
	t.Run("files changed behind the server's back are seen", func(t *testing.T) {
		// extra.go is created on disk and never opened; main.go (open)
		// changes on disk. Only workspace/didChangeWatchedFiles and a
		// didChange tell gopls.
		extra := filepath.Join(root, "greet", "extra.go")
		os.WriteFile(extra, []byte("package greet\n\n// Extra is new.\nfunc Extra() {}\n"), 0o644)
		orig := read(t, app)
		os.WriteFile(app, []byte(strings.Replace(orig, "func main() {\n", "func main() {\n\tgreet.Extra()\n", 1)), 0o644)
		out := mustRun(t, svc.Definition, PositionArgs{File: "cmd/app/main.go", Line: 12, Symbol: "Extra"})
		if out != "greet/extra.go:4:6: func Extra() {}" {
			t.Fatalf("definition of the new function = %q", out)
		}
		os.Remove(extra)
		os.WriteFile(app, []byte(orig), 0o644)
		out = mustRun(t, svc.Diagnostics, DiagnosticsArgs{File: "cmd/app/main.go"})
		if out != "No problems in cmd/app/main.go (gopls)." {
			t.Fatalf("after the revert: %q", out)
		}
	})
	t.Run("code action applied", func(t *testing.T) {
		out := mustRun(t, svc.CodeActions, CodeActionsArgs{PositionArgs: PositionArgs{File: "greet/tidy.go", Line: 4, Column: 2}, Kind: "source.organizeImports", Apply: 1})
		contains(t, out, `Applied code action "Organize Imports"`, "greet/tidy.go")
		if got := read(t, filepath.Join(root, "greet", "tidy.go")); strings.Contains(got, `"os"`) || !strings.Contains(got, `"strings"`) {
			t.Fatalf("tidy.go after organize imports:\n%s", got)
		}
		_, err := svc.CodeActions(context.Background(), args(CodeActionsArgs{PositionArgs: PositionArgs{File: "greet/tidy.go", Line: 3, Column: 1}, Kind: "source.organizeImports", Apply: 5}))
		if !errors.Is(err, ErrInvalidArgs) {
			t.Fatalf("apply out of range: %v", err)
		}
	})
	t.Run("rename across files", func(t *testing.T) {
		var updates []string
		out, err := svc.Rename(context.Background(), args(RenameArgs{PositionArgs: PositionArgs{File: "greet/greet.go", Line: 7, Symbol: "Hello"}, NewName: "Greeting"}),
			func(s string) { updates = append(updates, s) })
		if err != nil {
			t.Fatal(err)
		}
		want := "Renamed `Hello` to `Greeting`: 5 edits in 3 files:\ncmd/app/main.go\ngreet/greet.go\ngreet/shout.go"
		if out != want {
			t.Fatalf("rename = %q, want %q", out, want)
		}
		if len(updates) != 3 || updates[0] != "1/3 files patched: cmd/app/main.go" || updates[2] != "3/3 files patched: greet/shout.go" {
			t.Fatalf("progress %q", updates)
		}
		contains(t, read(t, app), "greet.Greeting(\"world\")")
		contains(t, read(t, filepath.Join(root, "greet", "shout.go")), "strings.ToUpper(Greeting(name))")
		cmd := exec.Command("go", "build", "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the renamed module does not build: %v\n%s", err, b)
		}
		out = mustRun(t, svc.Definition, PositionArgs{File: "cmd/app/main.go", Line: 12, Symbol: "Greeting"})
		contains(t, out, "greet/greet.go:7:6: func Greeting(name string) string {")
	})
	t.Run("rename after multibyte characters", func(t *testing.T) {
		mustRun(t, func(ctx context.Context, raw json.RawMessage) (string, error) { return svc.Rename(ctx, raw, nil) },
			RenameArgs{PositionArgs: PositionArgs{File: "uni/uni.go", Line: 9, Symbol: "Café"}, NewName: "Crème"})
		contains(t, read(t, uni), "var Crème = \"crème brûlée\"", "\t/* 🎉 日本語 é */ return Crème + \"🚀\"\n")
		contains(t, read(t, app), "fmt.Println(uni.Crème, uni.Sum())")
	})
	t.Run("rename refused when a file changed", func(t *testing.T) {
		rp, err := svc.PlanRename(context.Background(), args(RenameArgs{PositionArgs: PositionArgs{File: "greet/shout.go", Line: 6, Symbol: "Shout"}, NewName: "Yell"}))
		if err != nil {
			t.Fatal(err)
		}
		if got := rp.Files(); len(got) != 2 {
			t.Fatalf("plan files %v", got)
		}
		shout := filepath.Join(root, "greet", "shout.go")
		before := read(t, app)
		os.WriteFile(shout, []byte(read(t, shout)+"\n// edited meanwhile\n"), 0o644)
		_, err = svc.ApplyRename(context.Background(), rp, nil)
		if !errors.Is(err, ErrUnsafeEdit) || !strings.Contains(err.Error(), "greet/shout.go changed since the edit was computed; nothing was written") {
			t.Fatalf("err = %v", err)
		}
		if read(t, app) != before {
			t.Fatal("an unchanged file was written although the edit was refused")
		}
	})
	t.Run("edits outside the root are refused", func(t *testing.T) {
		h, err := svc.Manager().For(context.Background(), app)
		if err != nil {
			t.Fatal(err)
		}
		outside := filepath.Join(t.TempDir(), "x.go")
		os.WriteFile(outside, []byte("package x\n"), 0o644)
		_, err = svc.plan(h, protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{
			protocol.URIFromPath(outside): {{NewText: "// hi\n"}},
			protocol.URIFromPath(app):     {{NewText: "// hi\n"}},
		}})
		if !errors.Is(err, ErrUnsafeEdit) || !strings.Contains(err.Error(), "outside the workspace root") || !strings.Contains(err.Error(), outside) {
			t.Fatalf("err = %v", err)
		}
		_, err = svc.plan(h, protocol.WorkspaceEdit{DocumentChanges: []json.RawMessage{json.RawMessage(`{"kind":"rename","oldUri":"file:///a","newUri":"file:///b"}`)}})
		if !errors.Is(err, ErrUnsafeEdit) || !strings.Contains(err.Error(), "would rename files") {
			t.Fatalf("resource op: %v", err)
		}
	})
	t.Run("recovers after gopls is killed", func(t *testing.T) {
		h, err := svc.Manager().For(context.Background(), app)
		if err != nil {
			t.Fatal(err)
		}
		pid := h.PID()
		// Freeze gopls so the tool call is surely pending, then kill it:
		// the call fails naming the server.
		syscall.Kill(-pid, syscall.SIGSTOP)
		errc := make(chan error, 1)
		go func() {
			_, err := svc.Hover(context.Background(), args(PositionArgs{File: "cmd/app/main.go", Line: 13, Symbol: "Greeter"}))
			errc <- err
		}()
		time.Sleep(200 * time.Millisecond)
		syscall.Kill(-pid, syscall.SIGKILL)
		err = <-errc
		if err == nil || !strings.Contains(err.Error(), "language server gopls stopped (killed by signal") || !strings.Contains(err.Error(), "restarted on the next call") {
			t.Fatalf("pending call failed with %v", err)
		}
		out := mustRun(t, svc.Definition, PositionArgs{File: "cmd/app/main.go", Line: 13, Symbol: "Greeter"})
		contains(t, out, "greet/greet.go:12:6: type Greeter struct {")
		h2, _ := svc.Manager().For(context.Background(), app)
		if h2.PID() == pid {
			t.Fatal("still the killed process")
		}
	})
}

// TestGoplsDeclinedEncoding offers only UTF-8, which gopls declines (it
// answers UTF-16, the protocol's mandatory default): the client must use
// the server's choice, and columns after multi-byte characters must still
// come out right.
func TestGoplsDeclinedEncoding(t *testing.T) {
	svc, root := newService(t, protocol.UTF8)
	uni := filepath.Join(root, "uni", "uni.go")
	h, err := svc.Manager().For(context.Background(), uni)
	if err != nil {
		t.Fatal(err)
	}
	if h.Client.Encoding() != protocol.UTF16 {
		t.Fatalf("encoding %s, want the utf-16 gopls chose", h.Client.Encoding())
	}
	col := lsptest.Column(t, uni, 9, "Café")
	out := mustRun(t, svc.Definition, PositionArgs{File: "uni/uni.go", Line: 9, Column: col})
	if out != `uni/uni.go:5:5: var Café = "crème brûlée"` {
		t.Fatalf("definition = %q", out)
	}
	out = mustRun(t, svc.References, ReferencesArgs{PositionArgs: PositionArgs{File: "uni/uni.go", Line: 5, Column: 5}})
	contains(t, out, fmt.Sprintf("uni/uni.go:9:%d:", col))
	mustRun(t, func(ctx context.Context, raw json.RawMessage) (string, error) { return svc.Rename(ctx, raw, nil) },
		RenameArgs{PositionArgs: PositionArgs{File: "uni/uni.go", Line: 9, Column: col}, NewName: "Ñandú"})
	contains(t, read(t, uni), "\t/* 🎉 日本語 é */ return Ñandú + \"🚀\"\n", "var Ñandú = ")
}

func TestApplyEdits(t *testing.T) {
	text := protocol.NewText("a🎉b\nline2\n")
	pos := func(l, c int) protocol.Position { return protocol.Position{Line: l, Character: c} }
	got, err := applyEdits(text, []protocol.TextEdit{
		{Range: protocol.Range{Start: pos(1, 0), End: pos(1, 4)}, NewText: "LINE"},
		{Range: protocol.Range{Start: pos(0, 3), End: pos(0, 4)}, NewText: "B"}, // after the emoji in UTF-16
		{Range: protocol.Range{Start: pos(0, 0), End: pos(0, 0)}, NewText: "1"},
		{Range: protocol.Range{Start: pos(0, 0), End: pos(0, 0)}, NewText: "2"},
	}, protocol.UTF16)
	if err != nil || string(got) != "12a🎉B\nLINE2\n" {
		t.Fatalf("applyEdits = %q, %v", got, err)
	}
	_, err = applyEdits(text, []protocol.TextEdit{
		{Range: protocol.Range{Start: pos(0, 0), End: pos(0, 3)}},
		{Range: protocol.Range{Start: pos(0, 1), End: pos(0, 2)}},
	}, protocol.UTF16)
	if err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("overlapping edits: %v", err)
	}
}

func TestFindSymbol(t *testing.T) {
	for _, tc := range []struct {
		line, sym  string
		near, want int
		ok         bool
	}{
		{"x := foo(foo2, foo)", "foo", 0, 6, true},
		{"x := foo(foo2, foo)", "foo", 17, 16, true},
		{"/* 🎉 */ Café()", "Café", 0, 9, true},
		{"fooBar", "foo", 0, 0, false},
		{"a.b", ".", 0, 2, true},
	} {
		got, ok := findSymbol(tc.line, tc.sym, tc.near)
		if got != tc.want || ok != tc.ok {
			t.Errorf("findSymbol(%q, %q, %d) = %d, %v; want %d, %v", tc.line, tc.sym, tc.near, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMissingServer(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.rs"), []byte("fn main() {}\n"), 0o644)
	cfg, _ := manager.ParseConfig(json.RawMessage(`{"servers":{"rust":{"command":"rust-analyzer-missing-for-test","install":"rustup component add rust-analyzer"}}}`))
	var status []string
	m := manager.New(root, cfg, manager.Options{OnStatus: func(s string) { status = append(status, s) }})
	defer m.Shutdown()
	svc := New(m, nil)
	_, err := svc.Hover(context.Background(), args(PositionArgs{File: "a.rs", Line: 1, Column: 4}))
	want := "rust-analyzer-missing-for-test not found — install with `rustup component add rust-analyzer`"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if len(status) != 1 || status[0] != "degraded: "+want {
		t.Fatalf("status %q", status)
	}
}
