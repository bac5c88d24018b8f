package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A path package whose server is not built yet installs with a warning,
// and `ext list` shows it degraded until the executable exists.
func TestListShowsAMissingServerBinary(t *testing.T) {
	isolate(t)
	pkg := t.TempDir()
	os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(`{"name":"unbuilt","version":"0.1.0","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"yolop-extension-unbuilt"},"tools":[{"name":"a"}]}}`), 0o644)
	out, errOut, code := cli(t, "", "ext", "install", pkg, "--yes")
	if code != 0 {
		t.Fatalf("install: exit %d: %s", code, errOut)
	}
	mustContain(t, "install output", out+errOut, "server binary not found", "yolop-extension-unbuilt")
	out, _, _ = cli(t, "", "ext", "list")
	mustContain(t, "list", out, "unbuilt 0.1.0  disabled  degraded: server binary not found (yolop-extension-unbuilt)")

	os.MkdirAll(filepath.Join(pkg, "bin"), 0o755)
	os.WriteFile(filepath.Join(pkg, "bin", "yolop-extension-unbuilt"), []byte("#!/bin/sh\n"), 0o755)
	out, _, _ = cli(t, "", "ext", "list")
	mustContain(t, "list after the build", out, "unbuilt 0.1.0  disabled  ok")
}
