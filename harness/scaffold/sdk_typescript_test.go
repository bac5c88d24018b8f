package scaffold_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	. "yolop.dev/harness/scaffold" // the tests read as the package's own code

	"yolop.dev/doctor"
	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	tssdk "yolop.dev/sdk/typescript"
)

// TestTypeScriptSDKScaffoldPassesDoctor: a TypeScript package with every
// facet, written on the vendored SDK (--sdk), installs and passes every
// doctor check with zero edits; the SDK under lib/yolop-sdk is
// sdk/typescript's, byte for byte, and the server requires nothing
// outside Node.js's built-in modules and the SDK.
func TestTypeScriptSDKScaffoldPassesDoctor(t *testing.T) {
	t.Parallel()
	needLang(t, TypeScript)
	o := Options{
		Name: "tssdk", Lang: TypeScript, SDK: true, Dir: filepath.Join(t.TempDir(), "tssdk"),
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
	err = fs.WalkDir(tssdk.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want = append(want, p)
		src, _ := fs.ReadFile(tssdk.Files, p)
		got, err := os.ReadFile(filepath.Join(r.Dir, SDKDir, p))
		if err != nil {
			t.Errorf("vendored SDK: %v", err)
		} else if !bytes.Equal(got, src) {
			t.Errorf("vendored %s differs from sdk/typescript/%s", p, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"package.json", "src/index.js", "src/index.d.ts", "src/generated/meta.js", "src/generated/meta.d.ts", "src/generated/types.d.ts"} {
		if !slices.Contains(want, f) {
			t.Errorf("the embedded SDK has no %s (embed.go's pattern)", f)
		}
	}

	src, err := os.ReadFile(filepath.Join(r.Dir, r.Server))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(src, []byte("#!/usr/bin/env node\n// @ts-check\n")) {
		t.Error("no node shebang and // @ts-check")
	}
	for _, m := range regexp.MustCompile(`require\("([^"]+)"\)|import\(([^)]+)\)`).FindAllStringSubmatch(string(src), -1) {
		mod := m[1] + m[2]
		switch {
		case strings.HasPrefix(mod, "node:"):
		case strings.Contains(mod, `"..", "lib", "yolop-sdk"`) || strings.HasPrefix(mod, `"../lib/yolop-sdk/`) || strings.Contains(mod, "pathToFileURL"):
		default:
			t.Errorf("loads %s, neither a Node.js built-in nor the SDK", mod)
		}
	}
	for _, s := range r.Seams {
		if !strings.Contains(string(src), "function "+s.Func+"(") {
			t.Errorf("the server has no function %s (%s)", s.Func, s.What)
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

// TestTypeScriptSDKTemplateTypeChecks: for every facet combination, the
// --sdk server passes tsc --checkJs --strict against the vendored SDK's
// declarations and Node.js's types, in place in its package (so its
// imports of ../lib/yolop-sdk resolve), and so does the SDK's own
// index.js; an author who runs tsc starts from zero errors.
func TestTypeScriptSDKTemplateTypeChecks(t *testing.T) {
	t.Parallel()
	tsc, err := filepath.Abs(filepath.Join(tscDir, "node_modules", ".bin", "tsc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tsc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no tsc in %s; .ci/run runs npm ci there", tscDir)
		}
		t.Skipf("no tsc: run npm ci --prefix harness/scaffold/%s", tscDir)
	}
	need(t, "node", "apt-get install nodejs")
	types, _ := filepath.Abs(filepath.Join(tscDir, "node_modules", "@types"))
	work := t.TempDir()
	var files []string
	for i, c := range combos {
		o := c.o
		o.Name, o.Lang, o.SDK, o.Dir = c.name, TypeScript, true, filepath.Join(work, c.name)
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := os.ReadFile(filepath.Join(r.Dir, r.Server))
		js := filepath.Join(r.Dir, "bin", "server.js") // tsc wants a .js name
		if err := os.WriteFile(js, src, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, js)
		if i == 0 {
			files = append(files, filepath.Join(r.Dir, SDKDir, "src", "index.js"))
		}
	}
	// One tsc run; --moduleDetection force gives each file its own scope.
	args := append([]string{"--noEmit", "--allowJs", "--checkJs", "--strict", "--target", "es2022", "--module", "nodenext",
		"--moduleDetection", "force", "--types", "node", "--typeRoots", types}, files...)
	cmd := exec.CommandContext(t.Context(), tsc, args...)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("tsc: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}
