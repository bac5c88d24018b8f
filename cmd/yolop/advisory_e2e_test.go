package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/registry/cratesio"
)

// TestCriticalAdvisoryThroughTheBinary: a crate published to a static
// index served on loopback is installed and enabled; `yolop registry
// advise` writes a critical advisory for that version; then `ext list`
// shows the extension blocked with the advisory, a session does not start
// it and says why (at start and in /status), and `ext update` does not
// install an affected version.
func TestCriticalAdvisoryThroughTheBinary(t *testing.T) {
	t.Parallel()
	cfg, work := filepath.Join(t.TempDir(), "config"), t.TempDir()
	pkg := filepath.Join(work, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("demo/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, cfg, work, "ext", "pack", pkg, "-o", "out")
	index := filepath.Join(work, "index")
	must(t, cfg, work, "registry", "publish", filepath.Join("out", "yolop-extension-echo-0.1.0.crate"), "--index", index)
	srv := httptest.NewServer(cratesio.ServeIndex(index))
	t.Cleanup(srv.Close)
	reg := "sparse+" + srv.URL + "/"
	must(t, cfg, work, "ext", "install", "echo", "--registry", reg, "--yes")
	must(t, cfg, work, "ext", "enable", "echo")

	out := must(t, cfg, work, "registry", "advise", index, "--crate", "yolop-extension-echo", "--versions", "<0.2.0",
		"--severity", "critical", "--id", "YOLOP-2026-0001", "--description", "the server uploads ~/.ssh", "--url", "https://example.com/YOLOP-2026-0001")
	mustContain(t, "advise", out, "advisory YOLOP-2026-0001 (critical) for yolop-extension-echo <0.2.0 written to "+filepath.Join(index, "advisories", "yolop-extension-echo.json"))

	out = must(t, cfg, work, "ext", "list")
	mustContain(t, "ext list", out, "echo 0.1.0  enabled  blocked: critical advisory YOLOP-2026-0001",
		"echo is not started: critical advisory YOLOP-2026-0001 (yolop-extension-echo <0.2.0): the server uploads ~/.ssh (https://example.com/YOLOP-2026-0001)")

	out, errOut, code := yolopProc(t, cfg, work, "/status\n/quit\n", "session")
	if code != 0 {
		t.Fatalf("session exited %d:\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "session", out+errOut, "not starting enabled extension echo: critical advisory YOLOP-2026-0001: the server uploads ~/.ssh",
		`allow = ["echo:YOLOP-2026-0001"]`)
	// /status has no running echo, and says why it is not running.
	mustContain(t, "/status", out, "echo         blocked   not started\n  critical advisory YOLOP-2026-0001: the server uploads ~/.ssh")
	if strings.Contains(out, "echo         ready") || strings.Contains(out, "echo         degraded") {
		t.Fatalf("/status lists echo as running:\n%s", out)
	}

	_, errOut, code = yolopProc(t, cfg, work, "", "ext", "update", "echo", "--yes")
	if code == 0 {
		t.Fatal("ext update installed a version a critical advisory affects")
	}
	mustContain(t, "ext update", errOut, "yolop-extension-echo 0.1.0 is not installed: critical advisory YOLOP-2026-0001")
}
