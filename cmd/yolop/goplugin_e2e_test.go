package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	echoPluginOnce sync.Once
	echoPlugin     []byte // the built binary, shared by the tests
	echoPluginErr  error
	echoPluginOut  []byte
)

// goPluginEchoPackage writes the echo example's go-plugin build as a
// package: transport/goplugin/examples/echo's manifest (capabilityServer
// {"transport":"go-plugin"}) and its server built into bin/ (once per test
// run, kept in memory).
func goPluginEchoPackage(t *testing.T) string {
	t.Helper()
	echoPluginOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yolop-test-goplugin-")
		if err != nil {
			echoPluginErr = err
			return
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "yolop-extension-echo-goplugin")
		cmd := exec.Command("go", "build", "-o", bin, "yolop.dev/transport/goplugin/examples/echo")
		if echoPluginOut, echoPluginErr = cmd.CombinedOutput(); echoPluginErr == nil {
			echoPlugin, echoPluginErr = os.ReadFile(bin)
		}
	})
	if echoPluginErr != nil {
		t.Fatalf("building the go-plugin echo example: %v\n%s", echoPluginErr, echoPluginOut)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), fileBytes(t, "../../transport/goplugin/examples/echo/plugin.json"), 0o644)
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "bin", "yolop-extension-echo-goplugin"), echoPlugin, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The echo example over go-plugin: doctor green in place, installed from a
// path (the summary says go-plugin), a session (tools, streaming, the
// hook, the prompt, a command), doctor of the installed package; then
// installed from git, where a binary swapped after approval is refused
// before it runs.
func TestGoPluginPackageEndToEnd(t *testing.T) {
	isolate(t)
	pkg := goPluginEchoPackage(t)
	out, errOut, code := cli(t, "", "ext", "doctor", pkg)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor in place: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "doctor in place", out, "PASS", "cancel", "shutdown")

	out, _ = mustRun(t, "", "ext", "install", pkg, "--yes")
	mustContain(t, "install", out, `Server command: "yolop-extension-echo-goplugin" (over go-plugin)`)
	mustRun(t, "", "ext", "enable", "echo")
	script := strings.Join([]string{
		`/call echo {"text":"over go-plugin"}`,
		`/call count {"n":3,"delay_ms":1}`,
		`/call echo {"text":"forbidden"}`,
		"/prompt",
		"/echo:greet tester",
		"/status",
		"/quit",
	}, "\n")
	out, errOut = mustRun(t, script, "session")
	mustContain(t, "session", out, "over go-plugin\n", "1\n2\n3\n", "counted to 3", "blocked", "The echo extension is installed", "hello, tester", "echo         ready")
	out, errOut, code = cli(t, "", "ext", "doctor", "echo")
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor of the installed package: exit %d\n%s\n%s", code, out, errOut)
	}

	// Installed from git, the binary is pinned by the approval.
	cfg := isolate(t)
	src := t.TempDir()
	if err := os.CopyFS(src, os.DirFS(pkg)); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "ext", "install", gitRepo(t, src), "--yes")
	mustRun(t, "", "ext", "enable", "echo")
	t.Setenv("YOLOP_LOG", "debug")
	out, errOut = mustRun(t, `/call echo {"text":"pinned"}`+"\n/quit\n", "session")
	mustContain(t, "session from git", out, "pinned\n")
	mustContain(t, "session from git, its log", errOut, "plugin started", "pinned=true")
	t.Setenv("YOLOP_LOG", "")

	bin := filepath.Join(cfg, "extensions", "echo", "bin", "yolop-extension-echo-goplugin")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ = cli(t, `/call echo {"text":"swapped"}`+"\n/quit\n", "session")
	if strings.Contains(out, "swapped\n") {
		t.Fatalf("the swapped binary ran:\n%s\n%s", out, errOut)
	}
	mustContain(t, "session with a swapped binary", out+errOut, "changed: bin/yolop-extension-echo-goplugin", "yolop ext update echo")
}
