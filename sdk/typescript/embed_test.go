package tssdk

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFilesHoldTheRuntime: every runtime file under src/ on disk is
// embedded (a new module left out of embed.go's explicit patterns would
// be missing from every scaffolded package), every relative import of an
// embedded file resolves inside the embedded set, and nothing else is
// embedded (no tests, examples or generator).
func TestFilesHoldTheRuntime(t *testing.T) {
	var embedded []string
	if err := fs.WalkDir(Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	if err := filepath.WalkDir("src", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".js") || strings.HasSuffix(p, ".d.ts")) {
			onDisk = append(onDisk, filepath.ToSlash(p))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := append([]string{"package.json"}, onDisk...)
	slices.Sort(want)
	if !slices.Equal(embedded, want) {
		t.Errorf("embedded %q; want package.json and the runtime files under src/, %q", embedded, want)
	}

	imports := regexp.MustCompile(`(?m)^(?:import|export)\b[^"]*?from\s*"(\.{1,2}/[^"]+)"`)
	found := 0
	for _, p := range embedded {
		b, err := fs.ReadFile(Files, p)
		if err != nil {
			t.Fatal(err)
		}
		disk, err := os.ReadFile(p)
		if err != nil || string(disk) != string(b) {
			t.Errorf("%s: the embedded copy differs from the file on disk (%v)", p, err)
		}
		for _, m := range imports.FindAllStringSubmatch(string(b), -1) {
			found++
			target := filepath.ToSlash(filepath.Join(filepath.Dir(p), m[1]))
			if strings.HasSuffix(target, "/types.js") { // a type-only import: types.d.ts
				target = strings.TrimSuffix(target, ".js") + ".d.ts"
			}
			if !slices.Contains(embedded, target) {
				t.Errorf("%s imports %s, which is not embedded", p, m[1])
			}
		}
	}
	if found < 3 { // index.js and index.d.ts import the generated files
		t.Errorf("found %d relative imports in the embedded files; the pattern is broken", found)
	}
}
