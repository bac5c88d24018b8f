package settings

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHookPolicy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := New(dir)
	if p, err := f.HookPolicy(ctx); err != nil || p.OnError != "" || p.Plugins != nil || p.For("x") != "" {
		t.Fatalf("no file: %+v %v", p, err)
	}
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`[hooks]
on_error = "allow"

[hooks.plugins.guard]
on_error = "block"
`)
	p, err := f.HookPolicy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.For("guard") != HookBlock || p.For("other") != HookAllow {
		t.Errorf("policy %+v: guard %q, other %q", p, p.For("guard"), p.For("other"))
	}
	write(`[hooks.plugins.guard]
on_error = "allow"
`)
	if p, err = f.HookPolicy(ctx); err != nil || p.For("guard") != HookAllow || p.For("other") != "" {
		t.Errorf("per plugin only: %+v %v", p, err)
	}
	for body, want := range map[string]string{
		"hooks = 3\n":                          "hooks must be a table",
		"[hooks]\non_error = \"warn\"\n":       `hooks.on_error must be "block" or "allow"`,
		"[hooks]\ntimeout = 3\n":               "hooks.timeout is not a [hooks] key",
		"[hooks.plugins.g]\non_error = 1\n":    `hooks.plugins.g.on_error must be "block" or "allow"`,
		"[hooks.plugins.g]\nmatcher = \"x\"\n": "hooks.plugins.g.matcher is not a key",
		"[hooks]\nplugins = 1\n":               "hooks.plugins must be a table",
	} {
		write(body)
		_, err := f.HookPolicy(ctx)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), f.Path()) {
			t.Errorf("%q: %v, want ErrMalformed with %q and the path", body, err, want)
		}
	}
}
