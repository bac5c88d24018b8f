package manager

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

// A path package whose server executable does not exist yet installs with
// a warning and is listed degraded until the executable is there.
func TestMissingServerBinaryIsDegraded(t *testing.T) {
	for _, tc := range []struct{ command, file string }{
		{"demo-server", "bin/demo-server"},         // a bare name: bin/, then PATH
		{"build/demo-server", "build/demo-server"}, // a path inside the package
	} {
		t.Run(tc.command, func(t *testing.T) {
			ctx := context.Background()
			cfg, pkg := t.TempDir(), t.TempDir()
			m := New(Options{Store: packaging.NewStore(cfg), Settings: settings.New(cfg)})
			write(t, pkg, strings.Replace(wide, `"command":"demo-server"`, `"command":"`+tc.command+`"`, 1))
			out, err := m.Install(ctx, InstallRequest{Source: pkg, Consent: accept})
			if err != nil {
				t.Fatal(err)
			}
			if w := strings.Join(out.Warnings, "\n"); !strings.Contains(w, "server binary not found") || !strings.Contains(w, tc.command) {
				t.Errorf("install warnings = %q, want one naming the missing %s", out.Warnings, tc.command)
			}
			list, err := m.List(ctx)
			if err != nil || len(list) != 1 {
				t.Fatalf("List = %+v, %v", list, err)
			}
			if want := "degraded: server binary not found (" + tc.command + ")"; list[0].Health != want {
				t.Errorf("health = %q, want %q", list[0].Health, want)
			}
			if w := strings.Join(list[0].Warnings, "\n"); !strings.Contains(w, tc.command) {
				t.Errorf("list warnings = %q, want the resolver's detail", list[0].Warnings)
			}

			// Once built, it is healthy.
			p := filepath.Join(pkg, filepath.FromSlash(tc.file))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			list, err = m.List(ctx)
			if err != nil || len(list) != 1 || list[0].Health != "ok" || len(list[0].Warnings) != 0 {
				t.Errorf("after the build: List = %+v, %v", list, err)
			}
		})
	}
}
