package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"yolop.dev/agent"
	"yolop.dev/core/host"
	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/manager"
)

var (
	scriptedOnce sync.Once
	scriptedBin  string
	scriptedErr  error
)

// scriptedPackage copies agent/scripted/package into a fresh directory
// with its server, yolop-scripted-model, built into bin/ (once per test
// binary), and returns the directory.
func scriptedPackage(t *testing.T) string {
	t.Helper()
	scriptedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yolop-scripted-bin-")
		if err != nil {
			scriptedErr = err
			return
		}
		scriptedBin = filepath.Join(dir, "yolop-scripted-model")
		if out, err := exec.Command("go", "build", "-o", scriptedBin, "yolop.dev/agent/scripted/cmd/yolop-scripted-model").CombinedOutput(); err != nil {
			scriptedErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if scriptedErr != nil {
		t.Fatal(scriptedErr)
	}
	raw, err := os.ReadFile("../agent/scripted/package/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	pkg := t.TempDir()
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(scriptedBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "bin", "yolop-scripted-model"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return pkg
}

// providerPackage writes a package whose server is testdata/provider.py,
// approved for models (id: window), its announcement shaped by env.
func providerPackage(t *testing.T, name string, models map[string]int, env map[string]string) string {
	t.Helper()
	script, err := filepath.Abs("testdata/provider.py")
	if err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = map[string]string{}
	}
	var ms []map[string]any
	for id, w := range models {
		ms = append(ms, map[string]any{"id": id, "context_window": w})
	}
	m := map[string]any{
		"name": name, "version": "0.1.0", "description": "A provider for tests.",
		"yolop": map[string]any{
			"protocol_version": "1.0",
			"capabilityServer": map[string]any{"command": "python3", "args": []string{"-u", script}, "env": env},
			"provider":         map[string]any{"name": name, "models": ms},
			// The server is a script outside its package: its sandbox says so.
			"sandbox": map[string]any{"fs": []map[string]string{{"path": "${workspace}", "access": "rw"}, {"path": script}}},
		},
	}
	raw, _ := json.Marshal(m)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// modelSession opens a session over the packages in dirs (loaded in place,
// the first with cfg as its config) and the coding tools in ws, and starts
// it.
func modelSession(t *testing.T, h *harness.Harness, ws string, cfg json.RawMessage, dirs ...string) *harness.Session {
	t.Helper()
	ctx := context.Background()
	var grants []host.Grant
	for i, dir := range dirs {
		_, g, _, err := harness.InPlace(dir)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			g.Config = cfg
		}
		grants = append(grants, g)
	}
	s, _ := h.NewSession(ctx, harness.SessionOptions{Extra: grants, NoBuiltins: true, CodingTools: true, WorkspaceRoot: ws})
	t.Cleanup(s.Close)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func openHarness(t *testing.T, cfg string) *harness.Harness {
	t.Helper()
	if cfg == "" {
		cfg = t.TempDir()
	}
	t.Setenv(harness.ModelEnv, "")
	h, err := harness.Open(context.Background(), harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A real agent turn routed through ext:scripted/scripted: the scripted
// model extension, started by the session from its package, answers from
// its config's script — a tool call of read_file, then the answer — and
// /scripted:verify says the script played out.
func TestExtModelAgentTurn(t *testing.T) {
	pkg := scriptedPackage(t)
	script := `{"model": "scripted", "steps": [
	  {"when": {"user": "What does hello.txt say?", "offered": ["read_file"]},
	   "reply": {"tool_calls": [{"name": "read_file", "arguments": {"path": "hello.txt"}}]}},
	  {"when": {"tool_result": {"tool": "read_file", "contains": "hi there"}},
	   "reply": {"text": "It says: hi there."}}
	]}`
	if err := os.WriteFile(filepath.Join(pkg, "script.json"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hi there\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := openHarness(t, "")
	ctx := context.Background()
	s := modelSession(t, h, ws, json.RawMessage(`{"script": "script.json"}`), pkg)

	c, err := h.ResolveModel(ctx, "ext:scripted/scripted")
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := c.Extension(); !ok || name != "scripted" || c.Model != "scripted" || c.BaseURL != "" || c.KeyFrom != "" {
		t.Errorf("resolved %+v", c)
	}
	ag, err := h.NewAgent(ctx, s, harness.AgentOptions{Model: "ext:scripted/scripted"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ag.Turn(ctx, "What does hello.txt say?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "It says: hi there." || res.Stop != agent.StopDone || res.ToolCalls != 1 || res.Steps != 2 {
		t.Errorf("turn = %+v", res)
	}
	e, _ := s.Extension("scripted")
	v, err := e.ExecuteCommand(ctx, "verify", "")
	if err != nil || !v.Success {
		t.Errorf("verify = %+v, %v", v, err)
	}
}

// The failures of routing each say what to do: an extension that is not
// in the session (not installed; installed but not enabled), one without
// the providers facet, a model it does not serve.
func TestExtModelErrors(t *testing.T) {
	cfg := echotest.Installed(t) // echo: installed, enabled, no provider
	h := openHarness(t, cfg)
	ctx := context.Background()
	prov := providerPackage(t, "prov", map[string]int{"m1": 1000, "m2": 2000}, map[string]string{"PROVIDER_MODELS": "m1,m2"})
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: scriptedPackage(t), Consent: echotest.Accept}); err != nil {
		t.Fatal(err)
	}
	// scripted: installed, approved, not enabled.
	s, _ := h.NewSession(ctx, harness.SessionOptions{NoBuiltins: true, Extra: inPlace(t, prov)})
	defer s.Close()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ model, want string }{
		{"ext:nosuch/m", `extension "nosuch" is not in this session: it is not installed; install it with yolop ext install <source>, or load its package with --ext <dir>`},
		{"ext:scripted/scripted", `extension "scripted" is not in this session: enable it with yolop ext enable scripted`},
		{"ext:echo/m", `extension "echo" serves no models: its manifest has no provider facet`},
		{"ext:prov/m3", `extension "prov" does not serve model "m3"; it serves m1, m2 (ask one as ext:prov/<model>)`},
	} {
		ag, err := h.NewAgent(ctx, s, harness.AgentOptions{Model: tc.model})
		if err != nil {
			t.Fatalf("%s: NewAgent: %v", tc.model, err)
		}
		_, err = ag.Turn(ctx, "hi")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, harness.ErrModelConfig) {
			t.Errorf("%s: turn error %v\nwant %q", tc.model, err, tc.want)
		}
	}
	// The same session answers a model the extension serves.
	ag, err := h.NewAgent(ctx, s, harness.AgentOptions{Model: "ext:prov/m2"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ag.Turn(ctx, "hi"); err != nil || res.Text != "pong 1" {
		t.Fatalf("turn = %+v, %v", res, err)
	}
}

func inPlace(t *testing.T, dirs ...string) []host.Grant {
	t.Helper()
	gs, _, err := harness.InPlaceDirs(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// A provider whose announcement is wider than the approval is refused by
// the clamp, and routing says so with the refusal: a base URL on a host
// that is not loopback, a model the manifest does not list.
func TestExtModelClampRefusals(t *testing.T) {
	h := openHarness(t, "")
	ctx := context.Background()
	for _, tc := range []struct {
		name, model string
		env         map[string]string
		want        string
	}{
		{"far", "m1", map[string]string{"PROVIDER_HOST": "10.0.0.1"}, `extension "far" announced no usable provider (refused: far: baseUrl "http://10.0.0.1:`},
		{"named", "m1", map[string]string{"PROVIDER_HOST": "localhost"}, `is not a loopback IP literal`},
		{"wide", "m9", map[string]string{"PROVIDER_MODELS": "m1,m9"}, `extension "wide" does not serve model "m9"; it serves m1 (ask one as ext:wide/<model>); refused: m9: model of provider wide not declared in the approved manifest`},
		{"unapproved", "m9", map[string]string{"PROVIDER_MODELS": "m9"}, `extension "unapproved" announced no usable provider (refused: m9: model of provider unapproved not declared in the approved manifest)`},
		{"silent", "m1", map[string]string{"PROVIDER_NONE": "1"}, `extension "silent" announced no model provider when it started`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := h.NewSession(ctx, harness.SessionOptions{NoBuiltins: true, Extra: inPlace(t, providerPackage(t, tc.name, map[string]int{"m1": 1000}, tc.env))})
			defer s.Close()
			_ = s.Start(ctx)
			ag, err := h.NewAgent(ctx, s, harness.AgentOptions{Model: "ext:" + tc.name + "/" + tc.model})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ag.Turn(ctx, "hi"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("turn error %v\nwant %q", err, tc.want)
			}
		})
	}
}

// A provider server that dies while streaming ends the turn with an error
// saying so, and the next turn gets an answer from a respawned server.
func TestExtModelCrashMidTurn(t *testing.T) {
	h := openHarness(t, "")
	ctx := context.Background()
	s := modelSession(t, h, t.TempDir(), nil, providerPackage(t, "prov", map[string]int{"m1": 1000}, nil))
	e, _ := s.Extension("prov")
	ag, err := h.NewAgent(ctx, s, harness.AgentOptions{Model: "ext:prov/m1"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := ag.Turn(ctx, "hi"); err != nil || res.Text != "pong 1" {
		t.Fatalf("first turn = %+v, %v", res, err)
	}
	pid := e.PID()
	_, err = ag.Turn(ctx, "crash now")
	want := `the model provider extension "prov" stopped mid-reply: `
	if err == nil || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "; the next message starts it again") {
		t.Fatalf("crash turn error %v\nwant %q…; the next message starts it again", err, want)
	}
	res, err := ag.Turn(ctx, "hi again")
	if err != nil || res.Text != "pong 1" {
		t.Fatalf("turn after the crash = %+v, %v (a respawned server counts from 1)", res, err)
	}
	if e.PID() == pid || e.PID() == 0 {
		t.Errorf("the server was not respawned: pid %d, before %d", e.PID(), pid)
	}
}

// The context window is the one the user approved for the model; a
// smaller one in settings.toml lowers it, a larger one does not raise it.
func TestExtModelContextWindow(t *testing.T) {
	for _, tc := range []struct {
		settings string
		want     int
		from     string
	}{
		{"", 1000, "the approved manifest of extension prov"},
		{"context_window = 500\n", 500, harness.FromSettings},
		{"context_window = 100000\n", 1000, "the approved manifest of extension prov"},
	} {
		cfg := t.TempDir()
		toml := "[model]\nprovider = \"ext:prov\"\nmodel = \"m1\"\n" + tc.settings
		if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		h := openHarness(t, cfg)
		ctx := context.Background()
		c, err := h.ResolveModel(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		s, _ := h.NewSession(ctx, harness.SessionOptions{NoBuiltins: true, Extra: inPlace(t, providerPackage(t, "prov", map[string]int{"m1": 1000}, nil))})
		got, from := h.ModelContextWindow(ctx, s, c)
		s.Close()
		if got != tc.want || from != tc.from {
			t.Errorf("settings %q: context window %d from %q, want %d from %q", tc.settings, got, from, tc.want, tc.from)
		}
	}
}

// A provider server killed between turns is started again by the next
// turn, which answers as if nothing happened: whether or not the host has
// noticed the exit yet when the request goes out.
func TestExtModelServerKilledBetweenTurns(t *testing.T) {
	h := openHarness(t, "")
	ctx := context.Background()
	s := modelSession(t, h, t.TempDir(), nil, providerPackage(t, "prov", map[string]int{"m1": 1000}, nil))
	e, _ := s.Extension("prov")
	ag, err := h.NewAgent(ctx, s, harness.AgentOptions{Model: "ext:prov/m1"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if res, err := ag.Turn(ctx, "hi"); err != nil || res.Text != "pong 1" {
			t.Fatalf("turn %d = %+v, %v", i, res, err)
		}
		pid := e.PID()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
}
