package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"yolop.dev/core/host"
	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/manager"
	"yolop.dev/harness/secrets"
	"yolop.dev/internal/launchertest"
)

func TestMain(m *testing.M) {
	done := launchertest.Use()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		done()
		os.Exit(code)
	}))
}

// goBuild builds pkg into out.
func goBuild(t *testing.T, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// TestMinimalHost builds examples/minihost — a custom host binary in one
// screen — and runs a streamed tool call through it over an installed,
// enabled extension.
func TestMinimalHost(t *testing.T) {
	cfg := echotest.Installed(t)
	bin := filepath.Join(t.TempDir(), "minihost")
	goBuild(t, bin, "yolop.dev/harness/examples/minihost")
	cmd := exec.Command(bin, "count", `{"n":3,"delay_ms":1}`)
	cmd.Env = append(os.Environ(), "YOLOP_CONFIG_DIR="+cfg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("minihost: %v\n%s", err, out)
	}
	if want := "update: 1\nupdate: 2\nupdate: 3\ncounted to 3\n"; string(out) != want {
		t.Fatalf("minihost printed %q, want %q", out, want)
	}
	// A tool no extension serves fails with a message and status 1.
	cmd = exec.Command(bin, "nosuch")
	cmd.Env = append(os.Environ(), "YOLOP_CONFIG_DIR="+cfg)
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `"nosuch"`) {
		t.Fatalf("minihost nosuch: %v\n%s", err, out)
	}
}

// A session from the harness runs the enabled extensions with the
// built-ins, verifies them before each spawn and scrubs stored secrets.
func TestNewSession(t *testing.T) {
	cfg := echotest.Installed(t)
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{})
	defer s.Close()
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range s.Tools() {
		names = append(names, ti.Name)
	}
	for _, want := range []string{"echo", "count", "install_extension", "set_extension_secret"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("session tools %v lack %s", names, want)
		}
	}
	res, err := s.CallTool(ctx, "echo", "c1", json.RawMessage(`{"text":"hi"}`), nil)
	if err != nil || res.Output != "hi" {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	e, ok := s.Extension("echo")
	if !ok || e.Grant().Verify == nil {
		t.Fatal("the enabled extension runs without a per-spawn check")
	}
}

// The harness's packages import no front-end: a second front-end can use
// them without the CLI's dependencies.
func TestNoFrontEndDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "yolop.dev/harness/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"yolop.dev/cmd/", "github.com/spf13/cobra", "github.com/schollz/progressbar"} {
			if strings.HasPrefix(dep, bad) {
				t.Errorf("harness depends on the front-end package %s", dep)
			}
		}
	}
}

// TestInPlaceDirs: packages loaded in place come back as grants in the
// order given, and the first that does not load fails the lot with an
// error naming its directory.
func TestInPlaceDirs(t *testing.T) {
	manifest, err := os.ReadFile("../core/examples/echo/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	good := t.TempDir()
	if err := os.WriteFile(filepath.Join(good, "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	grants, _, err := harness.InPlaceDirs([]string{good})
	if err != nil || len(grants) != 1 || grants[0].Name != "echo" {
		t.Fatalf("InPlaceDirs(good) = %d grants, %v; want the echo grant", len(grants), err)
	}
	missing := filepath.Join(t.TempDir(), "nothing-here")
	grants, _, err = harness.InPlaceDirs([]string{good, missing})
	if err == nil || grants != nil || !strings.HasPrefix(err.Error(), missing+": ") {
		t.Fatalf("InPlaceDirs with a missing dir = %d grants, %v; want an error naming %s", len(grants), err, missing)
	}
}

// TestSecretStates: the secret fields of installed extensions with whether
// each is set, never a value; filtered by name.
func TestSecretStates(t *testing.T) {
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: echotest.Installed(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: echotest.Configured(t), Consent: echotest.Accept}); err != nil {
		t.Fatal(err)
	}
	states, err := h.SecretStates(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := harness.SecretState{Extension: "configured", Field: "token", Env: "CONFIGURED_TOKEN"}
	if len(states) != 1 || states[0] != want {
		t.Fatalf("states = %+v, want only %+v (echo declares no secret)", states, want)
	}
	if _, err := h.SetSecret(ctx, "configured", "token", secrets.New("tok-12345678")); err != nil {
		t.Fatal(err)
	}
	want.Set = true
	if states, err := h.SecretStates(ctx, "configured"); err != nil || len(states) != 1 || states[0] != want {
		t.Fatalf("after set: %+v, %v; want %+v", states, err, want)
	}
	if states, err := h.SecretStates(ctx, "echo"); err != nil || len(states) != 0 {
		t.Fatalf("echo's secret states = %+v, %v; want none", states, err)
	}
}

// TestOpenSession: the directories a front-end names are loaded in place,
// run after its own extra grants and listed by InPlace; an unusable one is
// the error, naming it, and no session is opened.
func TestOpenSession(t *testing.T) {
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nowhere")
	if s, _, err := h.OpenSession(ctx, harness.SessionOptions{}, []string{missing}); err == nil || s != nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("OpenSession with a missing package dir = %v, %v; want an error naming %s and no session", s, err, missing)
	}
	extra, _, err := harness.InPlaceDirs([]string{echotest.Package(t)})
	if err != nil {
		t.Fatal(err)
	}
	extra[0].Name, extra[0].Server.Name = "first", "first"
	s, _, err := h.OpenSession(ctx, harness.SessionOptions{Extra: extra}, []string{echotest.Package(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	inPlace := s.InPlace()
	if len(inPlace) != 1 || inPlace[0].Name != "echo" {
		t.Fatalf("InPlace = %+v, want the echo package", inPlace)
	}
	for _, name := range []string{"first", "echo"} {
		if _, ok := s.Extension(name); !ok {
			t.Fatalf("the session has no extension %q", name)
		}
	}
	if errs, failed := s.StartInPlace(ctx, inPlace); failed != 0 {
		t.Fatalf("StartInPlace = %v, %d failed", errs, failed)
	}
}

// TestStartInPlace: packages loaded in place start with the session, eager
// or not, and one whose server is missing counts as failed, with its
// error, while the others run.
func TestStartInPlace(t *testing.T) {
	ctx := context.Background()
	good := echotest.Package(t)
	broken := echotest.Package(t)
	if err := os.RemoveAll(filepath.Join(broken, "bin")); err != nil {
		t.Fatal(err)
	}
	grants, _, err := harness.InPlaceDirs([]string{good})
	if err != nil {
		t.Fatal(err)
	}
	bad, _, err := harness.InPlaceDirs([]string{broken})
	if err != nil {
		t.Fatal(err)
	}
	bad[0].Name = "broken"
	bad[0].Server.Name = "broken"
	grants[0].Prompt = nil // not eager: Start alone would leave it idle
	grants[0].Hooks = nil
	inPlace := append(grants, bad...)
	h, err := harness.Open(ctx, harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := h.NewSession(ctx, harness.SessionOptions{Extra: inPlace})
	defer s.Close()
	errs, failed := s.StartInPlace(ctx, inPlace)
	if failed != 1 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "broken") {
		t.Fatalf("StartInPlace = %v, %d failed; want the broken one's error, 1 failed", errs, failed)
	}
	e, _ := s.Extension("echo")
	if st, _ := e.State(); st != host.StateReady {
		t.Fatalf("the lazy in-place echo is %s after StartInPlace, want ready", st)
	}
}
