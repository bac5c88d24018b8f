package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/extensions/lsp/internal/client"
	"yolop.dev/extensions/lsp/internal/lsptest"
	"yolop.dev/extensions/lsp/internal/manager"
)

// serviceWith runs a manager with cfg on a copy of fixture.
func serviceWith(t *testing.T, fixture, cfg string) (*Service, string) {
	t.Helper()
	root := lsptest.Fixture(t, fixture)
	c, err := manager.ParseConfig(json.RawMessage(cfg))
	if err != nil {
		t.Fatal(err)
	}
	m := manager.New(root, c, manager.Options{})
	t.Cleanup(m.Shutdown)
	return New(m, nil), root
}

// TestPyright runs the tools against pyright-langserver installed from npm
// into testdata/node (npm ci --prefix extensions/lsp/testdata/node).
func TestPyright(t *testing.T) {
	bin := filepath.Join(lsptest.ModuleDir(), "testdata", "node", "node_modules", ".bin", "pyright-langserver")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("pyright is not installed in testdata/node (%v); run `npm ci --prefix extensions/lsp/testdata/node` to run this test", err) // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skipf("pyright is not installed in testdata/node (%v); run `npm ci --prefix extensions/lsp/testdata/node` to run this test", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed; pyright-langserver needs it") // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skip("node is not installed; pyright-langserver needs it")
	}
	cfgJSON, _ := json.Marshal(map[string]any{
		"servers":             map[string]any{"python": map[string]any{"command": bin}},
		"diagnostics_wait_ms": 30000,
		"request_timeout_ms":  60000,
	})
	svc, root := serviceWith(t, "pyproj", string(cfgJSON))
	cfgArgs := func(v any) json.RawMessage { return args(v) }
	ctx := context.Background()

	out, err := svc.Definition(ctx, cfgArgs(PositionArgs{File: "main.py", Line: 3, Symbol: "hello"}))
	if err != nil || !strings.HasPrefix(out, "pkg/greet.py:4:5: def hello(name: str) -> str:") {
		t.Fatalf("definition = %q, %v", out, err)
	}
	out, err = svc.References(ctx, cfgArgs(ReferencesArgs{PositionArgs: PositionArgs{File: "pkg/greet.py", Line: 4, Symbol: "hello"}}))
	if err != nil || !strings.Contains(out, "main.py:3:7:") || !strings.Contains(out, "pkg/greet.py:10:12:") {
		t.Fatalf("references = %q, %v", out, err)
	}
	out, err = svc.Hover(ctx, cfgArgs(PositionArgs{File: "main.py", Line: 3, Symbol: "hello"}))
	if err != nil || !strings.Contains(out, "def hello(name: str) -> str") {
		t.Fatalf("hover = %q, %v", out, err)
	}
	if h, err := svc.Manager().For(ctx, filepath.Join(root, "main.py")); err == nil {
		t.Logf("pyright %s: encoding %s, pull diagnostics %v", h.Name, h.Client.Encoding(), client.Supported(h.Client.Capabilities().DiagnosticProvider))
	}
	os.WriteFile(filepath.Join(root, "main.py"), []byte("from pkg.greet import hello\n\nprint(hello(1, 2))\n"), 0o644)
	out, err = svc.Diagnostics(ctx, cfgArgs(DiagnosticsArgs{File: "main.py"}))
	if err != nil || !strings.Contains(out, "main.py:3:") || !strings.Contains(out, "error") {
		t.Fatalf("diagnostics after a bad edit = %q, %v", out, err)
	}
	os.WriteFile(filepath.Join(root, "main.py"), []byte("from pkg.greet import hello\n\nprint(hello(\"world\"))\n"), 0o644)
	out, err = svc.Rename(ctx, cfgArgs(RenameArgs{PositionArgs: PositionArgs{File: "pkg/greet.py", Line: 4, Symbol: "hello"}, NewName: "greet"}), nil)
	if err != nil || !strings.Contains(out, "main.py") || !strings.Contains(out, "pkg/greet.py") {
		t.Fatalf("rename = %q, %v", out, err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "main.py"))
	if string(b) != "from pkg.greet import greet\n\nprint(greet(\"world\"))\n" {
		t.Fatalf("main.py after rename:\n%s", b)
	}
	out, err = svc.Symbols(ctx, cfgArgs(SymbolsArgs{File: "pkg/greet.py"}))
	if err != nil || !strings.Contains(out, "Function greet") || !strings.Contains(out, "Function shout") {
		t.Fatalf("symbols = %q, %v", out, err)
	}
}

// rustAnalyzerEnv names the rust-analyzer TestRustAnalyzer runs, when
// set; .ci/run sets it to the one it provides (see there).
const rustAnalyzerEnv = "YOLOP_TEST_RUST_ANALYZER"

// TestRustAnalyzer runs the tools against rust-analyzer when it works:
// $YOLOP_TEST_RUST_ANALYZER, else rust-analyzer on PATH.
func TestRustAnalyzer(t *testing.T) {
	ra := cmp.Or(os.Getenv(rustAnalyzerEnv), "rust-analyzer")
	if out, err := exec.Command(ra, "--version").CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if os.Getenv("CI") != "" {
			t.Fatalf("rust-analyzer is not usable (`%s --version`: %v: %s); .ci/run provides it as $%s", ra, err, first, rustAnalyzerEnv) // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skipf("rust-analyzer is not usable (`%s --version`: %v: %s); install it with `rustup component add rust-analyzer rust-src`, or set $%s, to run this test", ra, err, first, rustAnalyzerEnv)
	}
	if _, err := exec.LookPath("cargo"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("cargo is not installed; rust-analyzer needs it to load the project") // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skip("cargo is not installed; rust-analyzer needs it to load the project")
	}
	cfg, err := json.Marshal(map[string]any{"request_timeout_ms": 120000, "servers": map[string]any{"rust": map[string]any{"command": ra}}})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := serviceWith(t, "rustproj", string(cfg))
	out, err := svc.Definition(context.Background(), args(PositionArgs{File: "src/main.rs", Line: 4, Symbol: "hello"}))
	if err != nil || !strings.HasPrefix(out, "src/greet.rs:2:8:") {
		t.Fatalf("definition = %q, %v", out, err)
	}
}

// TestGoplsPullDiagnostics exercises the pull path (textDocument/diagnostic)
// with gopls's pullDiagnostics option.
func TestGoplsPullDiagnostics(t *testing.T) {
	lsptest.RequireGopls(t)
	svc, root := serviceWith(t, "gomod", `{"servers": {"go": {"initialization_options": {"pullDiagnostics": true}}}}`)
	ctx := context.Background()
	shout := filepath.Join(root, "greet", "shout.go")
	h, err := svc.Manager().For(ctx, shout)
	if err != nil {
		t.Fatal(err)
	}
	if !client.Supported(h.Client.Capabilities().DiagnosticProvider) {
		t.Skip("this gopls does not offer pull diagnostics (pullDiagnostics option)")
	}
	b, _ := os.ReadFile(shout)
	os.WriteFile(shout, []byte(strings.Replace(string(b), "Hello(name)", "loud(name)", 1)), 0o644)
	out, err := svc.Diagnostics(ctx, args(DiagnosticsArgs{File: "greet/shout.go"}))
	if err != nil || !strings.Contains(out, "greet/shout.go:7:") || !strings.Contains(out, "undefined: loud") {
		t.Fatalf("pulled diagnostics = %q, %v", out, err)
	}
}

// TestTypeScript runs the tools against typescript-language-server (with
// TypeScript 6, which still ships tsserver) installed from npm into
// testdata/node.
func TestTypeScript(t *testing.T) {
	nodeBin := filepath.Join(lsptest.ModuleDir(), "testdata", "node", "node_modules", ".bin")
	bin := filepath.Join(nodeBin, "typescript-language-server")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("typescript-language-server is not installed in testdata/node (%v); run `npm ci --prefix extensions/lsp/testdata/node` to run this test", err) // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skipf("typescript-language-server is not installed in testdata/node (%v); run `npm ci --prefix extensions/lsp/testdata/node` to run this test", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed; typescript-language-server needs it") // .ci/run installs it: in CI a skip would hide a broken install step
		}
		t.Skip("node is not installed; typescript-language-server needs it")
	}
	// The server finds TypeScript 6 next to it in testdata/node, as a
	// global install finds the global typescript@6.
	cfgJSON, _ := json.Marshal(map[string]any{
		"servers":             map[string]any{"typescript": map[string]any{"command": bin}},
		"diagnostics_wait_ms": 30000,
		"request_timeout_ms":  60000,
	})
	svc, root := serviceWith(t, "tsproj", string(cfgJSON))
	ctx := context.Background()
	out, err := svc.Definition(ctx, args(PositionArgs{File: "src/main.ts", Line: 1, Symbol: "hello"}))
	if err != nil || out != "src/greet.ts:2:17: export function hello(name: string): string {" {
		t.Fatalf("definition = %q, %v", out, err)
	}
	// Column 24 counts the emoji as one character; tsserver counts it as
	// two UTF-16 units.
	out, err = svc.References(ctx, args(ReferencesArgs{PositionArgs: PositionArgs{File: "src/greet.ts", Line: 2, Symbol: "hello"}}))
	if err != nil || !strings.Contains(out, "src/main.ts:3:24: /* 🎉 日本 */ console.log(hello(\"world\"));") {
		t.Fatalf("references = %q, %v", out, err)
	}
	out, err = svc.Hover(ctx, args(PositionArgs{File: "src/main.ts", Line: 3, Symbol: "hello"}))
	if err != nil || !strings.Contains(out, "hello(name: string): string") || !strings.Contains(out, "Returns a greeting for name.") {
		t.Fatalf("hover = %q, %v", out, err)
	}
	out, err = svc.Rename(ctx, args(RenameArgs{PositionArgs: PositionArgs{File: "src/main.ts", Line: 3, Symbol: "hello"}, NewName: "greet"}), nil)
	if err != nil {
		t.Fatalf("rename = %q, %v", out, err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "src", "main.ts"))
	if !strings.Contains(string(b), `/* 🎉 日本 */ console.log(greet("world"));`) {
		t.Fatalf("main.ts after rename:\n%s", b)
	}
}
