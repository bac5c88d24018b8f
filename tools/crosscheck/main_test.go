package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A type error in a file only one platform builds is found for that
// platform and no other: what the cross-build in scripts/test exists for.
func TestCheckFindsAPlatformOnlyError(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.test/m\n\ngo 1.26\n")
	write("a.go", "package m\n\nfunc Shared() int { return platform() }\n")
	write("a_linux.go", "package m\n\nfunc platform() int { return 1 }\n")
	write("a_darwin.go", "package m\n\nfunc platform() int { return 2 }\n")
	write("a_windows.go", "package m\n\nfunc platform() int { return \"windows\" }\n")
	t.Setenv("GOWORK", "off")
	ctx := context.Background()
	for _, tc := range []struct {
		goos  string
		fails bool
	}{{"linux", false}, {"darwin", false}, {"windows", true}} {
		n, errs, err := check(ctx, dir, tc.goos, "amd64", []string{"./..."})
		if err != nil {
			t.Fatalf("%s: %v", tc.goos, err)
		}
		if n != 1 {
			t.Errorf("%s: %d packages matched, want 1", tc.goos, n)
		}
		if got := len(errs) > 0; got != tc.fails {
			t.Errorf("%s: errors %q, want failure %v", tc.goos, errs, tc.fails)
		}
		if tc.fails && !strings.Contains(strings.Join(errs, "\n"), "a_windows.go") {
			t.Errorf("%s: the error does not name the file: %q", tc.goos, errs)
		}
	}
}

// A target that is not GOOS/GOARCH is a usage error.
func TestRunRefusesABadTarget(t *testing.T) {
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"windows"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "not GOOS/GOARCH") {
		t.Errorf("run(windows) = %d, %q", code, errb.String())
	}
}
