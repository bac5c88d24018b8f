package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/cmd/yolop/demo"
	"yolop.dev/core/host"
	"yolop.dev/harness"
)

// scriptedModelPackage copies agent/scripted/package with its server,
// yolop-scripted-model, built into bin/.
func scriptedModelPackage(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../agent/scripted/package/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "yolop-scripted-model"), "yolop.dev/agent/scripted/cmd/yolop-scripted-model").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// TestExtensionModel: yolop run answers through a model an extension
// serves (the scripted model's package, loaded in place, its real
// binary), and yolop models lists that model, marked in use.
func TestExtensionModel(t *testing.T) {
	pkg := scriptedModelPackage(t) // before runEnv moves HOME, and with it the build cache
	runEnv(t)
	out, errOut, code := cli(t, "", "run", "-p", "hi", "--model", "ext:scripted/scripted", "--ext", pkg, "--no-mcp", "--workspace", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "Hello from the scripted model: this reply comes from a script, served by an extension.\n"; out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}

	out, errOut, code = cli(t, "", "models", "--ext", pkg, "--model", "ext:scripted/scripted")
	if code != 0 {
		t.Fatalf("models: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"in use: ext:scripted/scripted (from --model)",
		"  openai/*     https://api.openai.com/v1/ (from default), no API key",
		"* ext:scripted/scripted 128,000-token window, loaded in place",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("yolop models lacks %q:\n%s", want, out)
		}
	}
	out, _, code = cli(t, "", "models", "--ext", pkg, "--json")
	var l harness.ModelList
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil {
		t.Fatalf("models --json: exit %d, %v:\n%s", code, err, out)
	}
	if len(l.ExtensionModels) != 1 || l.ExtensionModels[0].Ref != "ext:scripted/scripted" || l.ExtensionModels[0].ContextWindow != 128000 || l.InUse != "" || l.NoModel == "" {
		t.Errorf("models --json = %+v", l)
	}
}

// The demo fails when its model's script did not play to its end: the
// scripted model extension says so through its verify command.
func TestDemoVerifiesTheScript(t *testing.T) {
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: isolate(t)})
	if err != nil {
		t.Fatal(err)
	}
	g, cleanup, err := harness.EmbeddedGrant(demo.ScriptedManifest, "", "serve-scripted-model")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	s, _ := h.NewSession(ctx, harness.SessionOptions{Extra: []host.Grant{g}, NoEnabled: true, NoBuiltins: true})
	defer s.Close()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	err = verifyScript(ctx, s, g.Name)
	if err == nil || !strings.Contains(err.Error(), "did not play to its end") || !strings.Contains(err.Error(), "search for a deferred tool") {
		t.Fatalf("verify of an unplayed script: %v", err)
	}
}
