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
	echoWASMOnce sync.Once
	echoWASM     []byte
	echoWASMErr  error
)

// wasmEchoPackage writes the shipped WASM example,
// transport/wasm/examples/echo, as its README builds it: its manifest
// (capabilityServer {"transport":"wasm","module":"echo.wasm"}) and its
// server built with GOOS=wasip1 GOARCH=wasm (once per test run).
func wasmEchoPackage(t *testing.T) string {
	t.Helper()
	echoWASMOnce.Do(func() {
		out := filepath.Join(os.TempDir(), "yolop-test-echo-"+strings.ReplaceAll(t.Name(), "/", "_")+".wasm")
		cmd := exec.Command("go", "build", "-o", out, "yolop.dev/transport/wasm/examples/echo")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			echoWASMErr = err
			echoWASM = b
			return
		}
		echoWASM, echoWASMErr = os.ReadFile(out)
		os.Remove(out)
	})
	if echoWASMErr != nil {
		t.Fatalf("building the echo example for wasip1: %v\n%s", echoWASMErr, echoWASM)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), fileBytes(t, "../../transport/wasm/examples/echo/plugin.json"), 0o644)
	os.WriteFile(filepath.Join(dir, "echo.wasm"), echoWASM, 0o644)
	return dir
}

// The WASM example package through every front door: doctor graded green
// in place, install from a path (the summary says it is sandboxed), a
// session (tools, streaming, the hook, the prompt, a command), doctor of
// the installed package, list; then packed, published, served on
// loopback and installed by name. The compile of doctor in place is
// persisted and reused by the rest.
func TestWASMPackageEndToEnd(t *testing.T) {
	cfg := isolate(t)
	pkg := wasmEchoPackage(t)
	out, errOut, code := cli(t, "", "ext", "doctor", pkg)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor of the WASM example in place: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "doctor in place", out, "PASS", "cancel", "shutdown")

	out, errOut = mustRun(t, "", "ext", "install", pkg, "--yes")
	mustContain(t, "install", out, `Server: WASM module "echo.wasm" (sandboxed: no network, no filesystem unless granted)`, "memory cap: 256 MiB")
	_ = errOut
	mustRun(t, "", "ext", "enable", "echo")
	script := strings.Join([]string{
		`/call echo {"text":"from wasm"}`,
		`/call count {"n":3,"delay_ms":1}`,
		`/call echo {"text":"forbidden"}`,
		"/prompt",
		"/echo:greet tester",
		"/status",
		"/quit",
	}, "\n")
	out, errOut = mustRun(t, script, "session")
	mustContain(t, "session", out, "from wasm\n", "1\n2\n3\n", "counted to 3", "blocked", "The echo extension is installed", "hello, tester", "echo         ready")
	if strings.Contains(out+errOut, "command not found") {
		t.Fatalf("the session looked for a process:\n%s\n%s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(cfg, "cache", "wasm")); err != nil {
		t.Errorf("no persisted compile cache under the config dir: %v", err)
	}

	out, errOut, code = cli(t, "", "ext", "doctor", "echo")
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Fatalf("doctor of the WASM package: exit %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "doctor", out, "PASS", "cancel", "shutdown")

	list, _ := mustRun(t, "", "ext", "list")
	mustContain(t, "list", list, "echo 0.1.0  enabled  ok", "tools: echo, count, reverse")

	// One module serves every platform: pack ships it in the crate, with no
	// per-platform artifact.
	work := t.TempDir()
	packOut, _ := mustRun(t, "", "ext", "pack", pkg, "-o", work)
	crate := filepath.Join(work, "yolop-extension-echo-0.1.0.crate")
	if _, err := os.Stat(crate); err != nil {
		t.Fatalf("pack wrote no crate: %v\n%s", err, packOut)
	}
	index := filepath.Join(work, "index")
	mustRun(t, "", "registry", "publish", crate, "--index", index)
	reg := serveRegistry(t, index)
	isolate(t)
	out, _ = mustRun(t, "", "ext", "install", "echo", "--registry", reg, "--yes")
	mustContain(t, "install from the registry", out, "WASM module")
	mustRun(t, "", "ext", "enable", "echo")
	out, _ = mustRun(t, `/call echo {"text":"wasm from the registry"}`+"\n/quit\n", "session")
	mustContain(t, "session from the registry", out, "wasm from the registry\n")
}
