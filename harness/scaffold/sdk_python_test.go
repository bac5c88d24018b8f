package scaffold_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	. "yolop.dev/harness/scaffold" // the tests read as the package's own code

	"yolop.dev/doctor"
	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	pysdk "yolop.dev/sdk/python"
)

// TestPythonSDKScaffoldPassesDoctor: a Python package with every facet,
// written on the vendored SDK (--sdk), installs and passes every doctor
// check with zero edits; the SDK under lib/yolop-sdk is sdk/python's, byte
// for byte, and the server imports nothing outside the standard library
// and the SDK.
func TestPythonSDKScaffoldPassesDoctor(t *testing.T) {
	t.Parallel()
	needLang(t, Python)
	o := Options{
		Name: "pysdk", Lang: Python, SDK: true, Dir: filepath.Join(t.TempDir(), "pysdk"),
		Tools: []string{"hello", "world"}, Hooks: []string{"pre_tool_use", "post_tool_use:git*"},
		Prompt: true, DynamicPrompt: true, Commands: []string{"greet", "make-it"},
		Status: true, Ask: true, Config: true, Skills: true,
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RunBuild(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	checkManifest(t, r, o)

	// The vendored SDK is the embedded one, file for file.
	var want []string
	err = fs.WalkDir(pysdk.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want = append(want, p)
		src, _ := fs.ReadFile(pysdk.Files, p)
		got, err := os.ReadFile(filepath.Join(r.Dir, SDKDir, p))
		if err != nil {
			t.Errorf("vendored SDK: %v", err)
		} else if !bytes.Equal(got, src) {
			t.Errorf("vendored %s differs from sdk/python/%s", p, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pyproject.toml", "yolop_sdk/__init__.py", "yolop_sdk/server.py", "yolop_sdk/_wire.py", "yolop_sdk/_meta.py"} {
		if !slices.Contains(want, f) {
			t.Errorf("the embedded SDK has no %s (embed.go's pattern)", f)
		}
	}

	src, err := os.ReadFile(filepath.Join(r.Dir, r.Server))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(src, []byte("#!/usr/bin/env python3\n")) {
		t.Error("no python3 shebang")
	}
	for _, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "from ") {
			mod := strings.Fields(l)[1]
			if !slices.Contains([]string{"os", "sys", "yolop_sdk"}, mod) {
				t.Errorf("imports %s, neither the standard library nor the SDK", mod)
			}
		}
	}

	h, err := harness.Open(t.Context(), harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Manager().Install(t.Context(), manager.InstallRequest{Source: r.Dir, Consent: accept}); err != nil {
		t.Fatalf("install %s: %v", r.Dir, err)
	}
	m, g, err := h.InstalledGrant(t.Context(), o.Name)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := doctor.RunGrant(t.Context(), m, g, doctorOptions())
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]bool{}
	for _, ch := range rep.Checks {
		groups[string(ch.Group)] = true
		if ch.Status != doctor.Pass {
			t.Errorf("doctor %s: %s %s %s: %s", r.Dir, ch.Status, ch.Group, ch.Name, ch.Detail)
		}
	}
	for _, g := range []string{"tool", "hook", "prompt", "command", "config", "ui_ask", "status", "cancel", "schema"} {
		if !groups[g] {
			t.Errorf("doctor ran no %s check", g)
		}
	}
	if t.Failed() {
		var b bytes.Buffer
		rep.WriteTable(&b)
		t.Logf("doctor report:\n%s", b.String())
	}
}
