package scaffold_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	. "yolop.dev/harness/scaffold" // the tests read as the package's own code

	pysdk "yolop.dev/sdk/python"
	tssdk "yolop.dev/sdk/typescript"
)

// TestSDKScaffoldPassesDoctor: a Python or TypeScript package with every
// facet, written on the vendored SDK (--sdk), installs and passes every
// doctor check with zero edits; the SDK under lib/yolop-sdk is the SDK
// module's embedded files, byte for byte, and the server loads nothing
// outside the language's standard library and the SDK.
func TestSDKScaffoldPassesDoctor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lang   string
		sdk    fs.FS
		files  []string // the SDK's runtime files, which must be embedded
		prefix string   // how the server begins
		loads  *regexp.Regexp
		allow  func(mod string) bool
	}{
		{
			lang: Python, sdk: pysdk.Files,
			files:  []string{"pyproject.toml", "yolop_sdk/__init__.py", "yolop_sdk/server.py", "yolop_sdk/_wire.py", "yolop_sdk/_meta.py"},
			prefix: "#!/usr/bin/env python3\n",
			loads:  regexp.MustCompile(`(?m)^(?:import|from) ([\w.]+)`),
			allow:  func(mod string) bool { return slices.Contains([]string{"os", "sys", "yolop_sdk"}, mod) },
		},
		{
			lang: TypeScript, sdk: tssdk.Files,
			files:  []string{"package.json", "src/index.js", "src/index.d.ts", "src/generated/meta.js", "src/generated/meta.d.ts", "src/generated/types.d.ts"},
			prefix: "#!/usr/bin/env node\n// @ts-check\n",
			loads:  regexp.MustCompile(`require\("([^"]+)"\)|import\(([^)]+)\)`),
			allow: func(mod string) bool {
				return strings.HasPrefix(mod, "node:") || strings.Contains(mod, `"..", "lib", "yolop-sdk"`) ||
					strings.HasPrefix(mod, `"../lib/yolop-sdk/`) || strings.Contains(mod, "pathToFileURL")
			},
		},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			t.Parallel()
			needLang(t, tc.lang)
			name := "sdk" + tc.lang
			o := combos[slices.IndexFunc(combos, func(c combo) bool { return c.name == "everything" })].o
			o.Name, o.Lang, o.SDK, o.Dir = name, tc.lang, true, filepath.Join(t.TempDir(), name)
			r, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			checkManifest(t, r, o)

			var embedded []string
			err = fs.WalkDir(tc.sdk, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				embedded = append(embedded, p)
				src, _ := fs.ReadFile(tc.sdk, p)
				got, err := os.ReadFile(filepath.Join(r.Dir, SDKDir, p))
				if err != nil {
					t.Errorf("vendored SDK: %v", err)
				} else if !bytes.Equal(got, src) {
					t.Errorf("vendored %s differs from the SDK's %s", p, p)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				if !slices.Contains(embedded, f) {
					t.Errorf("the embedded SDK has no %s (embed.go's pattern)", f)
				}
			}

			src, err := os.ReadFile(filepath.Join(r.Dir, r.Server))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(src, []byte(tc.prefix)) {
				t.Errorf("the server does not begin %q", tc.prefix)
			}
			for _, m := range tc.loads.FindAllStringSubmatch(string(src), -1) {
				if mod := strings.Join(m[1:], ""); !tc.allow(mod) {
					t.Errorf("the server loads %s, neither the standard library nor the SDK", mod)
				}
			}
			for _, s := range r.Seams {
				if !strings.Contains(string(src), s.Func+"(") {
					t.Errorf("the server has no function %s (%s)", s.Func, s.What)
				}
			}

			rep := installAndDoctor(t, r, nil)
			groups := map[string]bool{}
			for _, ch := range rep.Checks {
				groups[string(ch.Group)] = true
			}
			for _, g := range []string{"tool", "hook", "prompt", "command", "config", "ui_ask", "status", "cancel", "schema"} {
				if !groups[g] {
					t.Errorf("doctor ran no %s check", g)
				}
			}
		})
	}
}
