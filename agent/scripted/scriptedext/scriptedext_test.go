package scriptedext_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/agent/provider"
	"yolop.dev/core/host"
	"yolop.dev/transport/stdio"
)

// pkg is the part of agent/scripted/package/plugin.json the test reads.
type pkg struct {
	Name  string `json:"name"`
	Yolop struct {
		ProtocolVersion  string `json:"protocol_version"`
		CapabilityServer struct {
			Command string `json:"command"`
		} `json:"capabilityServer"`
		Provider struct {
			Name   string `json:"name"`
			Models []struct {
				ID            string `json:"id"`
				ContextWindow int    `json:"context_window"`
			} `json:"models"`
		} `json:"provider"`
		Commands []struct {
			Name string `json:"name"`
		} `json:"commands"`
	} `json:"yolop"`
}

// installPackage copies the package into a temporary directory, builds
// its server into bin/ (where the host looks for a bare command first)
// and returns the directory and the grant the manifest approves.
func installPackage(t *testing.T) (string, host.Grant) {
	t.Helper()
	raw, err := os.ReadFile("../package/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m pkg
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("plugin.json: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin", m.Yolop.CapabilityServer.Command)
	if out, err := exec.Command("go", "build", "-o", bin, "yolop.dev/agent/scripted/cmd/yolop-scripted-model").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	g := host.Grant{
		Name: m.Name, ProtocolVersion: m.Yolop.ProtocolVersion,
		Provider: &host.ProviderGrant{Name: m.Yolop.Provider.Name},
	}
	g.Server.Name, g.Server.Command, g.Server.PackageDir = m.Name, m.Yolop.CapabilityServer.Command, dir
	for _, pm := range m.Yolop.Provider.Models {
		g.Provider.Models = append(g.Provider.Models, host.ProviderModel{ID: pm.ID, ContextWindow: pm.ContextWindow})
	}
	for _, c := range m.Yolop.Commands {
		g.Commands = append(g.Commands, host.CommandGrant{Name: c.Name})
	}
	return dir, g
}

func start(t *testing.T, g host.Grant) (*host.Extension, host.ProviderInfo) {
	t.Helper()
	s := host.NewSession(host.SessionOptions{Grants: []host.Grant{g}, Transport: stdio.New(stdio.Options{})})
	t.Cleanup(s.Close)
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e, _ := s.Extension(g.Name)
	p, ok := e.Provider()
	if !ok {
		t.Fatalf("the extension offers no provider; refusals: %+v", e.Refusals())
	}
	return e, p
}

func ask(t *testing.T, p host.ProviderInfo, model, msg string) (provider.Result, error) {
	t.Helper()
	op := provider.OpenAI(provider.Options{BaseURL: p.BaseURL, APIKey: "test", Getenv: func(string) string { return "" }})
	return op.Stream(context.Background(), provider.Request{Model: model, Messages: []provider.Message{{Role: provider.RoleUser, Text: msg}}}, nil)
}

// The package's server, started by the host from the package, announces
// a loopback endpoint serving the manifest's model; a real chat completion
// streams its embedded script's answer, and /scripted:verify says whether
// the script played out.
func TestPackageServesItsModel(t *testing.T) {
	_, g := installPackage(t)
	e, p := start(t, g)
	if !strings.HasPrefix(p.BaseURL, "http://127.0.0.1:") || !strings.HasSuffix(p.BaseURL, "/v1") {
		t.Errorf("base URL %q: want http://127.0.0.1:<port>/v1", p.BaseURL)
	}
	if len(p.Models) != 1 || p.Models[0] != (host.ProviderModel{ID: "scripted", ContextWindow: 128000}) {
		t.Errorf("models = %+v, want the manifest's scripted (128000)", p.Models)
	}
	res, err := e.ExecuteCommand(context.Background(), "verify", "")
	if err != nil || res.Success || !strings.Contains(res.Message, "answer any message") {
		t.Errorf("verify before any request = %+v, %v; want a failure naming the step", res, err)
	}
	r, err := ask(t, p, "scripted", "hi")
	if err != nil || !strings.Contains(r.Text, "Hello from the scripted model") {
		t.Fatalf("chat completion = %q, %v", r.Text, err)
	}
	res, err = e.ExecuteCommand(context.Background(), "verify", "")
	if err != nil || !res.Success || !strings.Contains(res.Message, "1 of 1 steps") {
		t.Errorf("verify after the answer = %+v, %v", res, err)
	}
}

// The config's script replaces the embedded one, a relative path being
// the package directory's; a script that is not there fails the start
// with its path.
func TestConfigScript(t *testing.T) {
	dir, g := installPackage(t)
	script := `{"model": "scripted", "steps": [{"when": {"user": "ping"}, "reply": {"text": "pong"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	g.Config = json.RawMessage(`{"script": "script.json"}`)
	_, p := start(t, g)
	if r, err := ask(t, p, "scripted", "ping"); err != nil || r.Text != "pong" {
		t.Fatalf("chat completion = %q, %v", r.Text, err)
	}

	g.Config = json.RawMessage(`{"script": "missing.json"}`)
	s := host.NewSession(host.SessionOptions{Grants: []host.Grant{g}, Transport: stdio.New(stdio.Options{})})
	defer s.Close()
	err := s.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("start with a missing script: %v", err)
	}
}
