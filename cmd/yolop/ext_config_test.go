package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// installLifeWithDefaults installs the life package with schema defaults
// for restart and a new plain field, greeting.
func installLifeWithDefaults(t *testing.T) (cfg string) {
	t.Helper()
	cfg = isolate(t)
	pkg, _ := lifePackage(t)
	p := filepath.Join(pkg, "plugin.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	old := `"restart": { "type": "boolean" }`
	if !strings.Contains(string(b), old) {
		t.Fatalf("the life manifest no longer has %s", old)
	}
	b = []byte(strings.Replace(string(b), old, `"restart": { "type": "boolean", "default": false },
        "greeting": { "type": "string", "default": "hello", "description": "What to say" }`, 1))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	return cfg
}

// TestExtConfigGetShowsDefaults: a field left unset shows its schema
// default, marked as one; `ext config get <name>` lists every field that
// way, with the secret ones pointing at ext secret.
func TestExtConfigGetShowsDefaults(t *testing.T) {
	cfg := installLifeWithDefaults(t)
	st := filepath.Join(cfg, "settings.toml")
	out, errOut, code := cli(t, "", "ext", "config", "get", "life", "greeting")
	if code != 0 || strings.TrimSpace(out) != "hello (default; not set in "+st+")" {
		t.Fatalf("get greeting: exit %d %q %s", code, out, errOut)
	}
	if _, errOut, code := cli(t, "", "ext", "config", "set", "life", "mode", "slow"); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code = cli(t, "", "ext", "config", "get", "life")
	if code != 0 {
		t.Fatalf("get life: exit %d %s", code, errOut)
	}
	want := strings.Join([]string{
		"greeting = hello (default)",
		"mode = slow",
		"restart = false (default)",
		"token: secret, not shown; see `yolop ext secret list life`",
		"(values from " + st + "; a default applies where nothing is set)",
	}, "\n") + "\n"
	if out != want {
		t.Errorf("ext config get life:\n%s\nwant:\n%s", out, want)
	}
}
