package settings

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSandboxSettings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := New(dir)
	if s, err := f.Sandbox(ctx); err != nil || s.RefuseUnsandboxed || s.Extensions != nil {
		t.Fatalf("no file: %+v %v", s, err)
	}
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`[sandbox]
refuse_unsandboxed = true

[sandbox.extensions.lsp]
fs = [{ path = "${home}/.config/gopls", access = "ro" }]
connect = [443]
exec = true

[sandbox.extensions.old]
mode = "off"
`)
	s, err := f.Sandbox(ctx)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	want := Sandbox{RefuseUnsandboxed: true, Extensions: map[string]SandboxOverride{
		"lsp": {FS: []SandboxPath{{Path: "${home}/.config/gopls", Access: "ro"}}, Connect: []int{443}, Exec: &yes},
		"old": {Mode: "off"},
	}}
	if d := cmp.Diff(want, s); d != "" {
		t.Fatalf("sandbox (-want +got):\n%s", d)
	}
	if !s.Extensions["old"].Off() || s.Extensions["lsp"].Off() {
		t.Fatal("Off")
	}
	for body, msg := range map[string]string{
		"[sandbox]\nrefuse = true\n":                                       "refuse",
		"[sandbox.extensions.x]\nmode = \"maybe\"\n":                       `sandbox.extensions.x.mode must be "on" or "off"`,
		"[sandbox.extensions.x]\nconnect = [0]\n":                          "sandbox.extensions.x.connect[0] is 0",
		"[sandbox.extensions.x]\nfs = [{path = \"/a\", access = \"w\"}]\n": "sandbox.extensions.x.fs[0].access",
		"sandbox = 1\n": "sandbox must be a table",
	} {
		write(body)
		if _, err := f.Sandbox(ctx); err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), f.Path()) {
			t.Errorf("%q: err = %v, want it to name %q and the file", body, err, msg)
		}
	}
}
