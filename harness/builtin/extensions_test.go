package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/manager"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// scripted is an AskSink that answers from a list and records questions.
type scripted struct {
	mu        sync.Mutex
	answers   []string
	questions []string
}

func (s *scripted) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.questions = append(s.questions, ext+": "+p.Prompt)
	if len(s.answers) == 0 {
		return yep.UIAskResult{Cancelled: true}, nil
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return yep.UIAskResult{Answer: a}, nil
}

const manifest = `{"name":"demo","version":"0.1.0","yolop":{"protocol_version":"1.0",
 "capabilityServer":{"command":"demo-server"},
 "tools":[{"name":"demo_tool","description":"d"}],
 "hooks":[{"event":"pre_tool_use","matcher":"*"}]}}`

func setup(t *testing.T) (*manager.Manager, string, string) {
	t.Helper()
	cfg := t.TempDir()
	pkg := t.TempDir()
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	m := manager.New(manager.Options{Store: packaging.NewStore(cfg), Settings: settings.New(cfg)})
	return m, cfg, pkg
}

func call(t *testing.T, s *host.Session, tool string, args any) yep.ToolResult {
	t.Helper()
	b, _ := json.Marshal(args)
	res, err := s.CallTool(context.Background(), tool, "c1", b, nil)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func TestInstallThroughTheToolNeedsTheUsersConsent(t *testing.T) {
	m, cfg, pkg := setup(t)
	lock := filepath.Join(cfg, packaging.LockFileName)

	// No ask sink: refused, nothing written.
	ext := NewExtensions(m, ExtensionsOptions{})
	s := host.NewSession(host.SessionOptions{Builtins: []host.Capability{ext}})
	defer s.Close()
	res := call(t, s, "install_extension", map[string]string{"source": pkg})
	if !res.IsError || !strings.Contains(res.Output, "cannot ask") || !strings.Contains(res.Output, "yolop ext install "+pkg) {
		t.Fatalf("install with no sink = %+v", res)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatal("a refused install wrote the lock")
	}

	// The user says no: the question carried the summary.
	sink := &scripted{answers: []string{"no", "Y"}}
	ext.SetAsk(sink)
	res = call(t, s, "install_extension", map[string]string{"source": pkg})
	if !res.IsError || !strings.Contains(res.Output, "declined") {
		t.Fatalf("declined install = %+v", res)
	}
	if len(sink.questions) != 1 || !strings.Contains(sink.questions[0], "MATCHES EVERY TOOL CALL") ||
		!strings.Contains(sink.questions[0], "demo_tool") || !strings.HasPrefix(sink.questions[0], "extensions: ") {
		t.Fatalf("question = %q", sink.questions)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatal("a declined install wrote the lock")
	}

	// The user says Y: installed.
	res = call(t, s, "install_extension", map[string]string{"source": pkg})
	if res.IsError || !strings.Contains(res.Output, "installed demo 0.1.0") {
		t.Fatalf("accepted install = %+v", res)
	}
	l, err := packaging.ReadLockFile(lock)
	if err != nil || l.Entry("demo") == nil {
		t.Fatalf("lock = %+v, %v", l, err)
	}
}

func TestEnableDisableListRemoveTools(t *testing.T) {
	m, cfg, pkg := setup(t)
	if _, err := m.Install(context.Background(), manager.InstallRequest{Source: pkg, Consent: func(context.Context, manager.Proposal) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	var activated []string
	var deactivated []string
	ext := NewExtensions(m, ExtensionsOptions{})
	ext.SetSession(func(g host.Grant) { activated = append(activated, g.Name) }, func(n string) bool { deactivated = append(deactivated, n); return true })
	s := host.NewSession(host.SessionOptions{Builtins: []host.Capability{ext}})
	defer s.Close()

	res := call(t, s, "list_extensions", map[string]any{})
	var list []manager.Info
	if err := json.Unmarshal(res.Data, &list); err != nil || len(list) != 1 || list[0].Name != "demo" || list[0].Enabled {
		t.Fatalf("list = %s (%v)", res.Data, err)
	}
	if !strings.Contains(res.Output, "path (live, not hash-verified)") {
		t.Fatalf("list text = %s", res.Output)
	}

	res = call(t, s, "enable_extension", map[string]string{"name": "demo"})
	if res.IsError || strings.Join(activated, ",") != "demo" {
		t.Fatalf("enable = %+v, activated %v", res, activated)
	}
	b, _ := os.ReadFile(filepath.Join(cfg, settings.FileName))
	if !strings.Contains(string(b), "ext:demo") {
		t.Fatalf("settings.toml = %s", b)
	}
	res = call(t, s, "enable_extension", map[string]string{"name": "nope"})
	if !res.IsError || !strings.Contains(res.Output, "not installed") {
		t.Fatalf("enable of an unknown name = %+v", res)
	}

	res = call(t, s, "disable_extension", map[string]string{"name": "demo"})
	if res.IsError || res.Output != "disabled demo" || strings.Join(deactivated, ",") != "demo" {
		t.Fatalf("disable = %+v, deactivated %v", res, deactivated)
	}
	res = call(t, s, "remove_extension", map[string]string{"name": "demo"})
	if res.IsError || res.Output != "removed demo" {
		t.Fatalf("remove = %+v", res)
	}
	res = call(t, s, "remove_extension", map[string]string{"name": "demo"})
	if !res.IsError {
		t.Fatal("removing twice succeeded")
	}
	res = call(t, s, "enable_extension", map[string]any{})
	if !res.IsError || !strings.Contains(res.Output, `needs "name"`) {
		t.Fatalf("missing argument = %+v", res)
	}
}

func TestToolsAreDeclared(t *testing.T) {
	m, _, _ := setup(t)
	var names []string
	for _, d := range NewExtensions(m, ExtensionsOptions{}).Tools() {
		if !json.Valid(d.InputSchema) || d.Description == "" {
			t.Errorf("tool %s: schema or description missing", d.Name)
		}
		names = append(names, d.Name)
	}
	if got := strings.Join(names, ","); got != "install_extension,update_extension,list_extensions,enable_extension,disable_extension,remove_extension,scaffold_extension,doctor_extension,reload_extension" {
		t.Fatalf("tools = %s", got)
	}
}
