package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ext info describes an installed extension (approval, source, lock,
// health, config), a widened path source with its pending diff, a package
// directory that is not installed, and a registry crate without
// installing it.
func TestExtInfo(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := cli(t, "", "ext", "info", "echo")
	if code != 0 {
		t.Fatalf("info echo: %s", errOut)
	}
	mustContain(t, "info", out, "echo 0.1.0 — installed, disabled", "approval: approved", "source:   "+pkg+" (path)", "content:  sha256:",
		"Extension echo 0.1.0", "Tools (3):", "Requires: yolop >=0.1")

	widen(t, pkg)
	out, _, _ = cli(t, "", "ext", "info", "echo")
	mustContain(t, "info after widening", out, "approval: manifest changed — needs approval", "new tool shout")
	var in struct {
		Name, Approval, Pending string
		Installed               bool
		Lock                    struct {
			ContentHash string `json:"content_hash"`
		}
	}
	js, _, _ := cli(t, "", "ext", "info", "echo", "--json")
	if err := json.Unmarshal([]byte(js), &in); err != nil || !in.Installed || in.Lock.ContentHash == "" || !strings.Contains(in.Pending, "shout") {
		t.Fatalf("info --json = %s (%v)", js, err)
	}

	// A directory that is not installed: its manifest alone.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "plugin.json"), []byte(`{"name":"other","version":"2.0.0","yolop":{"protocol_version":"1.0","capabilityServer":{"command":"x"},"tools":[{"name":"t"}]}}`), 0o644)
	out, _, code = cli(t, "", "ext", "info", other)
	if code != 0 {
		t.Fatal("info of a package directory failed")
	}
	mustContain(t, "info dir", out, "other 2.0.0 — not installed", "approval: not installed", "Extension other 2.0.0")

	// A crate from a loopback registry: read, never installed.
	_, reg := manifestOnlyIndex(t)
	before := snapshot(t, cfg)
	out, errOut, code = cli(t, "", "ext", "info", "crates.io:yolop-extension-echo", "--registry", reg)
	if code != 0 {
		t.Fatalf("info of a crate: %s", errOut)
	}
	mustContain(t, "info crate", out, "echo 0.1.0 — not installed", "source:   "+reg+"#yolop-extension-echo (crate)", "Extension echo")
	sameSnapshot(t, "info of a crate", before, snapshot(t, cfg))

	if _, errOut, code := cli(t, "", "ext", "info"); code == 0 || !strings.Contains(errOut, "missing <name|path|crate>; installed: echo") {
		t.Fatalf("info with no argument: %d %s", code, errOut)
	}
}
