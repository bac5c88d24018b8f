package settings

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gotoml "github.com/pelletier/go-toml/v2"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func decode(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := gotoml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s does not parse after a write: %v\n%s", path, err, b)
	}
	return m
}

func TestEnableDisableRoundTrip(t *testing.T) {
	ctx := context.Background()
	f := New(filepath.Join(t.TempDir(), "cfg")) // directory created on write
	if names, err := f.Enabled(ctx); err != nil || len(names) != 0 {
		t.Fatalf("Enabled on a missing file = %v, %v", names, err)
	}
	if changed, err := f.Enable(ctx, "echo"); err != nil || !changed {
		t.Fatalf("Enable = %v, %v", changed, err)
	}
	if changed, _ := f.Enable(ctx, "echo"); changed {
		t.Fatal("enabling twice changed the file")
	}
	f.Enable(ctx, "lsp")
	names, err := f.Enabled(ctx)
	if err != nil || !cmp.Equal(names, []string{"echo", "lsp"}) {
		t.Fatalf("Enabled = %v, %v", names, err)
	}
	want := map[string]any{"capabilities": []any{
		map[string]any{"ref": "ext:echo"}, map[string]any{"ref": "ext:lsp"},
	}}
	if d := cmp.Diff(want, decode(t, f.Path())); d != "" {
		t.Fatalf("settings.toml (-want +got):\n%s", d)
	}
	if changed, err := f.Disable(ctx, "echo"); err != nil || !changed {
		t.Fatalf("Disable = %v, %v", changed, err)
	}
	if changed, _ := f.Disable(ctx, "echo"); changed {
		t.Fatal("disabling twice changed the file")
	}
	names, _ = f.Enabled(ctx)
	if !cmp.Equal(names, []string{"lsp"}) {
		t.Fatalf("after disable: %v", names)
	}
	if removed, err := f.Remove(ctx, "lsp"); err != nil || !removed {
		t.Fatalf("Remove = %v, %v", removed, err)
	}
	if d := cmp.Diff(map[string]any{"capabilities": []any{}}, decode(t, f.Path())); d != "" {
		t.Fatalf("after remove (-want +got):\n%s", d)
	}
}

func TestConfigSurvivesDisable(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	cfg := map[string]any{"greeting": "hi", "retries": int64(3), "nested": map[string]any{"on": true}}
	if err := f.SetCapabilityConfig(ctx, "echo", cfg); err != nil {
		t.Fatal(err)
	}
	e, ok, err := f.Entry(ctx, "echo")
	if err != nil || !ok || e.Enabled {
		t.Fatalf("configuring must not enable: %+v %v %v", e, ok, err)
	}
	f.Enable(ctx, "echo")
	f.Disable(ctx, "echo")
	f.Enable(ctx, "echo")
	got, err := f.CapabilityConfig(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(cfg, got); d != "" {
		t.Fatalf("config after disable/enable (-want +got):\n%s", d)
	}
	if names, _ := f.Enabled(ctx); !cmp.Equal(names, []string{"echo"}) {
		t.Fatalf("enabled = %v", names)
	}
	// Clearing the config of a disabled entry drops the entry.
	f.Disable(ctx, "echo")
	if err := f.SetCapabilityConfig(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.Entry(ctx, "echo"); ok {
		t.Fatal("a disabled entry with no config was kept")
	}
}

const foreign = `# a comment (comments are not kept)
theme = "dark"
"dotted.key" = 1
started = 2026-11-30T14:00:00Z
day = 2026-11-30
ratio = 0.5
empty = {}

[model]
name = "big"
max_tokens = 4096

[[capabilities]]
ref = "builtin:fs"
roots = ["/src", "/tmp"]

[[capabilities]]
ref = "ext:keep"
future_key = { x = 1 }
config = { a = "b" }

[[capabilities]]
ref = "builtin:shell"
`

func TestUnknownKeysSurviveAWrite(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	if err := os.WriteFile(f.Path(), []byte(foreign), 0o600); err != nil {
		t.Fatal(err)
	}
	before := decode(t, f.Path())
	if _, err := f.Enable(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	after := decode(t, f.Path())
	caps := before["capabilities"].([]any)
	before["capabilities"] = append(caps, map[string]any{"ref": "ext:echo"})
	if d := cmp.Diff(before, after); d != "" {
		t.Fatalf("a write changed the meaning of other keys (-want +got):\n%s", d)
	}
	if fi, _ := os.Stat(f.Path()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}
	// Disable keeps an entry that carries other keys.
	f.Disable(ctx, "keep")
	e, ok, _ := f.Entry(ctx, "keep")
	if !ok || e.Enabled || e.Config["a"] != "b" {
		t.Fatalf("keep after disable = %+v, %v", e, ok)
	}
	if names, _ := f.Enabled(ctx); !cmp.Equal(names, []string{"echo"}) {
		t.Fatalf("enabled = %v", names)
	}
	// The other entries are where they were.
	got := decode(t, f.Path())["capabilities"].([]any)
	var refs []string
	for _, c := range got {
		refs = append(refs, c.(map[string]any)["ref"].(string))
	}
	if !cmp.Equal(refs, []string{"builtin:fs", "ext:keep", "builtin:shell", "ext:echo"}) {
		t.Fatalf("refs = %v", refs)
	}
}

func TestMalformedSettingsWritesNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"syntax", "theme = \"dark\"\n[[capabilities]]\nref = \"ext:echo\nx=1\n", ":3:"},
		{"not a list", "capabilities = \"ext:echo\"\n", `"capabilities" must be an array of tables`},
		{"no ref", "[[capabilities]]\nname = \"echo\"\n", "capabilities[0] has no string ref"},
		{"bad enabled", "[[capabilities]]\nref = \"ext:echo\"\nenabled = \"no\"\n", "enabled must be true or false"},
		{"bad config", "[[capabilities]]\nref = \"ext:echo\"\nconfig = 3\n", "config must be a table"},
		{"duplicate", "[[capabilities]]\nref = \"ext:echo\"\n[[capabilities]]\nref = \"ext:echo\"\n", "more than one"},
		{"duplicate key", "a = 1\na = 2\n", ":2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := New(dir)
			os.WriteFile(f.Path(), []byte(tc.content), 0o644)
			check := func(err error) {
				t.Helper()
				if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), f.Path()) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error = %v; want ErrMalformed naming %s and %q", err, f.Path(), tc.want)
				}
			}
			_, err := f.Enable(ctx, "other")
			check(err)
			_, err = f.Enabled(ctx)
			check(err)
			check(f.SetCapabilityConfig(ctx, "other", map[string]any{"a": 1}))
			_, err = f.Remove(ctx, "echo")
			check(err)
			b, _ := os.ReadFile(f.Path())
			if string(b) != tc.content {
				t.Fatalf("the malformed file was rewritten:\n%s", b)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Fatalf("left a temporary file %s", e.Name())
				}
			}
		})
	}
}

func TestConcurrentWritersAllLand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A File per goroutine: separate lock handles, as two
			// processes would have.
			_, err := New(dir).Enable(ctx, "ext"+string(rune('a'+i)))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	names, err := New(dir).Enabled(ctx)
	if err != nil || len(names) != n {
		t.Fatalf("after %d concurrent enables: %v, %v (a lost update?)", n, names, err)
	}
}

func TestLockWaitHonoursContext(t *testing.T) {
	dir := t.TempDir()
	f := New(dir)
	held, err := f.lock(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = New(dir).Enable(ctx, "echo")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), LockName) {
		t.Fatalf("Enable under a held lock = %v", err)
	}
	if _, err := os.Stat(f.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a blocked writer wrote the file")
	}
}

func FuzzLoad(f *testing.F) {
	for _, s := range []string{foreign, "", "capabilities = []", "[[capabilities]]\nref = \"ext:a\"\n", "a = [", "\"a.b\" = {c = 1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dir := t.TempDir()
		sf := New(dir)
		os.WriteFile(sf.Path(), []byte(s), 0o644)
		before := []byte(s)
		if _, err := sf.Enable(context.Background(), "fz"); err != nil {
			if b, _ := os.ReadFile(sf.Path()); string(b) != string(before) {
				t.Fatalf("failed write changed the file: %v", err)
			}
			return
		}
		names, err := sf.Enabled(context.Background())
		if err != nil || !strings.Contains(strings.Join(names, ","), "fz") {
			t.Fatalf("after a successful enable: %v, %v", names, err)
		}
	})
}

func TestDefaultRegistry(t *testing.T) {
	dir := t.TempDir()
	f := New(dir)
	ctx := context.Background()
	if reg, err := f.Registry(ctx); err != nil || reg != "" {
		t.Fatalf("no settings: %q, %v", reg, err)
	}
	path := filepath.Join(dir, "settings.toml")
	os.WriteFile(path, []byte("[extensions]\nregistry = \"sparse+https://index.example/\"\n"), 0o644)
	if reg, err := f.Registry(ctx); err != nil || reg != "sparse+https://index.example/" {
		t.Fatalf("registry = %q, %v", reg, err)
	}
	// It survives a write of the capabilities list.
	if _, err := f.Enable(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	if reg, _ := f.Registry(ctx); reg != "sparse+https://index.example/" {
		t.Fatalf("registry lost on write: %q", reg)
	}
	os.WriteFile(path, []byte("[extensions]\nregistry = 42\n"), 0o644)
	if _, err := f.Registry(ctx); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "extensions.registry") {
		t.Fatalf("malformed registry: %v", err)
	}
}

func TestDownloadLimits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := New(dir)
	if l, err := f.DownloadLimits(ctx); err != nil || l.LowSpeedLimit != nil || l.LowSpeedTime != nil || l.DownloadTimeout != nil {
		t.Fatalf("no settings file: %+v, %v; want nothing set", l, err)
	}
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("[extensions]\nregistry = \"sparse+https://index.example/\"\n\n[registry]\nlow_speed_limit = 0\nlow_speed_time = \"1m30s\"\ndownload_timeout = 600\nretries = 0\n")
	l, err := f.DownloadLimits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l.LowSpeedLimit == nil || *l.LowSpeedLimit != 0 || l.LowSpeedTime == nil || *l.LowSpeedTime != 90*time.Second ||
		l.DownloadTimeout == nil || *l.DownloadTimeout != 10*time.Minute || l.Retries == nil || *l.Retries != 0 {
		t.Fatalf("limits = %+v", l)
	}
	if reg, err := f.Registry(ctx); err != nil || reg != "sparse+https://index.example/" {
		t.Errorf("the [registry] table broke [extensions] registry: %q, %v", reg, err)
	}
	for body, key := range map[string]string{
		"[registry]\nlow_speed_limit = -1\n":       "registry.low_speed_limit",
		"[registry]\nlow_speed_limit = \"10\"\n":   "registry.low_speed_limit",
		"[registry]\nlow_speed_time = \"soon\"\n":  "registry.low_speed_time",
		"[registry]\ndownload_timeout = \"-5m\"\n": "registry.download_timeout",
		"[registry]\ndownload_timeout = 1.5\n":     "registry.download_timeout",
		"[registry]\nretries = -1\n":               "registry.retries",
		"[registry]\nretries = \"3\"\n":            "registry.retries",
	} {
		write(body)
		if _, err := f.DownloadLimits(ctx); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), f.Path()) {
			t.Errorf("%q: err = %v; want ErrMalformed naming %s and the file", body, err, key)
		}
	}
}

func TestToolTimeout(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	if d, err := f.ToolTimeout(ctx); err != nil || d != 0 {
		t.Fatalf("no settings file: %v, %v; want 0 (not set)", d, err)
	}
	for body, want := range map[string]time.Duration{
		"[session]\ntool_timeout = \"90s\"\n": 90 * time.Second,
		"[session]\ntool_timeout = 120\n":     2 * time.Minute,
		"[other]\nx = 1\n":                    0,
	} {
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if d, err := f.ToolTimeout(ctx); err != nil || d != want {
			t.Errorf("%q: %v, %v; want %v", body, d, err, want)
		}
	}
	for _, body := range []string{"[session]\ntool_timeout = 0\n", "[session]\ntool_timeout = \"later\"\n", "[session]\ntool_timeout = \"-1m\"\n"} {
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := f.ToolTimeout(ctx); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "session.tool_timeout") || !strings.Contains(err.Error(), f.Path()) {
			t.Errorf("%q: err = %v; want ErrMalformed naming session.tool_timeout and the file", body, err)
		}
	}
}

func TestMCPNeverDefer(t *testing.T) {
	dir := t.TempDir()
	f := New(dir)
	ctx := context.Background()
	if got, err := f.MCPNeverDefer(ctx); err != nil || got != nil {
		t.Fatalf("unset = %v, %v", got, err)
	}
	os.WriteFile(f.Path(), []byte("[mcp]\nnever_defer = [\"mcp__github__*\", \"mcp__x__y\"]\n"), 0o600)
	if got, err := f.MCPNeverDefer(ctx); err != nil || len(got) != 2 || got[0] != "mcp__github__*" {
		t.Fatalf("set = %v, %v", got, err)
	}
	os.WriteFile(f.Path(), []byte("[mcp]\nnever_defer = \"mcp__*\"\n"), 0o600)
	if _, err := f.MCPNeverDefer(ctx); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a string = %v", err)
	}
}

// TestWriteKeepsASymlinkedFile writes through a settings.toml that is a
// symlink (a dotfiles checkout): the link stays a link and the file it
// points to gets the new content.
func TestWriteKeepsASymlinkedFile(t *testing.T) {
	ctx := context.Background()
	cfgDir, dotfiles := t.TempDir(), t.TempDir()
	target := filepath.Join(dotfiles, "yolop-settings.toml")
	if err := os.WriteFile(target, []byte("[[capabilities]]\nref = \"ext:echo\"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(cfgDir, FileName)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f := New(cfgDir)
	if err := f.SetCapabilityConfig(ctx, "echo", map[string]any{"greeting": "hi"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is now a %v, not the symlink it was", link, fi.Mode().Type())
	}
	if dest, err := os.Readlink(link); err != nil || dest != target {
		t.Fatalf("the link points to %q (%v), want %q", dest, err, target)
	}
	want := map[string]any{"capabilities": []any{map[string]any{"ref": "ext:echo", "config": map[string]any{"greeting": "hi"}}}}
	if d := cmp.Diff(want, decode(t, target)); d != "" {
		t.Errorf("the link's target (-want +got):\n%s", d)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("the target's mode = %v (%v), want 0640 kept", fi.Mode().Perm(), err)
	}
}

func TestModel(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	if m, ok, err := f.Model(ctx); err != nil || ok || m != (Model{}) {
		t.Fatalf("no settings file: %+v, %v, %v; want nothing set", m, ok, err)
	}
	for body, want := range map[string]Model{
		"[model]\nprovider = \"openai\"\nmodel = \"llama3.2\"\nbase_url = \"http://localhost:11434/v1\"\n":               {Provider: "openai", Model: "llama3.2", BaseURL: "http://localhost:11434/v1"},
		"[model]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"\ncontext_window = 200000\nmax_tokens = 8192\n": {Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 200000, MaxTokens: 8192},
		"[model]\nmodel = \"openai/gpt-4.1\"\n":                  {Model: "openai/gpt-4.1"},
		"[model]\nbase_url = \"https://openrouter.ai/api/v1\"\n": {BaseURL: "https://openrouter.ai/api/v1"},
	} {
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok, err := f.Model(ctx)
		if err != nil || !ok {
			t.Errorf("%q: %v, %v", body, ok, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", body, diff)
		}
	}
	os.WriteFile(f.Path(), []byte("[session]\ntool_timeout = \"5m\"\n"), 0o644)
	if _, ok, err := f.Model(ctx); ok || err != nil {
		t.Fatalf("no [model] table: ok=%v err=%v", ok, err)
	}
	for body, key := range map[string]string{
		"model = \"gpt-4.1\"\n":                                     "model must be a table",
		"[model]\nprovider = 1\nmodel = \"m\"\n":                    "model.provider",
		"[model]\nprovider = \"\"\nmodel = \"m\"\n":                 "model.provider",
		"[model]\nprovider = \"openai\"\nmodel = \"\"\n":            "model.model",
		"[model]\nprovider = \"openai\"\nmodel = [\"a\"]\n":         "model.model",
		"[model]\nbase_url = \"localhost:11434\"\n":                 "model.base_url",
		"[model]\nbase_url = \"ftp://example.com/v1\"\n":            "model.base_url",
		"[model]\ncontext_window = 0\n":                             "model.context_window",
		"[model]\ncontext_window = \"128k\"\n":                      "model.context_window",
		"[model]\nmax_tokens = -1\n":                                "model.max_tokens",
		"[model]\ncontext_window = 1000\nmax_tokens = 1000\n":       "model.max_tokens",
		"[model]\nprovider = \"openai\"\nbase-url = \"http://x\"\n": "model.base-url",
	} {
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := f.Model(ctx)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), f.Path()) {
			t.Errorf("%q: err = %v; want ErrMalformed naming %q and the file", body, err, key)
		}
	}
}

func TestModelSurvivesAnExtensionWrite(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	body := "[model]\nprovider = \"openai\"\nmodel = \"llama3.2\"\nbase_url = \"http://localhost:11434/v1\"\ncontext_window = 32768\n"
	if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Enable(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	got, ok, err := f.Model(ctx)
	want := Model{Provider: "openai", Model: "llama3.2", BaseURL: "http://localhost:11434/v1", ContextWindow: 32768}
	if err != nil || !ok || got != want {
		t.Fatalf("after enable: %+v, %v, %v; want %+v", got, ok, err, want)
	}
}
