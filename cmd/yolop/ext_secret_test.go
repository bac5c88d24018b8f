package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
)

// lifeToken is the canary secret the tests set and then hunt for.
const lifeToken = "tok-canary-4b1e77d0"

// lifePackage writes the "life" package: the host's raw-protocol Python
// test server (which dumps the env and initialize params it gets to the
// init_file of its spec), with a config_schema holding a secret token
// (env LIFE_TOKEN), a required enum and an optional flag. Its server spec
// takes the script and the spec from ${LIFE_SERVER_PY} and ${LIFE_SPEC}.
// It returns the package dir and the init file.
func lifePackage(t *testing.T) (pkg, initFile string) {
	t.Helper()
	script, err := filepath.Abs("../../core/host/testdata/server.py")
	if err != nil {
		t.Fatal(err)
	}
	initFile = filepath.Join(t.TempDir(), "init.json")
	spec, _ := json.Marshal(map[string]any{"name": "life", "capabilities": []string{"tools", "config", "status"}, "init_file": initFile})
	t.Setenv("LIFE_SERVER_PY", script)
	t.Setenv("LIFE_SPEC", string(spec))
	pkg = t.TempDir()
	manifest := `{
  "name": "life", "version": "0.1.0", "description": "Config and secrets test package.",
  "yolop": {
    "protocol_version": "1.0",
    "capabilityServer": { "command": "python3", "args": ["-u", "${LIFE_SERVER_PY}"], "env": { "YEP_TEST_SPEC": "${LIFE_SPEC}" } },
    "sandbox": { "fs": [{ "path": "${workspace}", "access": "rw" }, { "path": "` + filepath.Dir(script) + `" }, { "path": "` + filepath.Dir(initFile) + `", "access": "rw" }] },
    "status": true,
    "tools": [
      { "name": "echo", "description": "Echo text.", "input_schema": { "type": "object" }, "never_defer": true },
      { "name": "env", "description": "Dump the environment.", "input_schema": { "type": "object" }, "never_defer": true },
      { "name": "status", "description": "Set the status.", "input_schema": { "type": "object" }, "never_defer": true },
      { "name": "log", "description": "Log a line.", "input_schema": { "type": "object" }, "never_defer": true }
    ],
    "config_schema": {
      "type": "object",
      "properties": {
        "token": { "type": "string", "secret": true, "env": "LIFE_TOKEN", "description": "API token", "minLength": 8 },
        "mode": { "type": "string", "enum": ["fast", "slow"] },
        "restart": { "type": "boolean" }
      },
      "required": ["token", "mode"],
      "additionalProperties": false
    }
  }
}`
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return pkg, initFile
}

func installLife(t *testing.T) (cfg, initFile string) {
	t.Helper()
	cfg = isolate(t)
	pkg, initFile := lifePackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	return cfg, initFile
}

func TestExtSecretSet(t *testing.T) {
	cfg, _ := installLife(t)
	conn := filepath.Join(cfg, secrets.FileName)

	// A value as an argument is refused (shell history, ps), not echoed.
	out, errOut, code := cli(t, "", "ext", "secret", "set", "life", "token", lifeToken)
	if code == 0 || !strings.Contains(errOut, "refusing a secret given on the command line") || strings.Contains(out+errOut, lifeToken) {
		t.Fatalf("argument value: %d\n%s\n%s", code, out, errOut)
	}
	// No terminal and no --stdin: told to pipe it.
	if _, errOut, code := cli(t, lifeToken+"\n", "ext", "secret", "set", "life", "token"); code == 0 || !strings.Contains(errOut, "--stdin") {
		t.Fatalf("no terminal: %d %s", code, errOut)
	}
	// Not a secret field, not installed, an empty line, a value the schema
	// refuses (minLength) — never echoed.
	for _, tc := range []struct{ stdin, field, ext, want string }{
		{lifeToken, "mode", "life", `no secret field "mode"; its secret fields are: token`},
		{lifeToken, "token", "ghost", "not installed"},
		{"\n", "token", "life", "no secret given"},
		{"short\n", "token", "life", "minLength"},
	} {
		out, errOut, code := cli(t, tc.stdin, "ext", "secret", "set", tc.ext, tc.field, "--stdin")
		if code == 0 || !strings.Contains(errOut, tc.want) || strings.Contains(out+errOut, "short") {
			t.Errorf("%s.%s: %d %s", tc.ext, tc.field, code, errOut)
		}
	}
	if _, err := os.Stat(conn); !os.IsNotExist(err) {
		t.Fatal("a refused value was stored")
	}

	out, errOut, code = cli(t, lifeToken+"\n", "ext", "secret", "set", "life", "token", "--stdin")
	if code != 0 || !strings.Contains(out, "(saved) secret life.token") || strings.Contains(out+errOut, lifeToken) {
		t.Fatalf("set --stdin: %d\n%s\n%s", code, out, errOut)
	}
	fi, err := os.Lstat(conn)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("connections.toml: %v %v", fi, err)
	}
	s, ok, err := secrets.NewFile(cfg).Get(t.Context(), "life", "token")
	if err != nil || !ok || s.Reveal() != lifeToken {
		t.Fatalf("stored = %v %v", ok, err)
	}
	// Without a trailing newline (printf '%s' "$TOKEN" | ...), too.
	if _, errOut, code := cli(t, lifeToken+"-2", "ext", "secret", "set", "life", "token", "--stdin"); code != 0 {
		t.Fatal(errOut)
	}

	out, _, _ = cli(t, "", "ext", "secret", "list")
	if !strings.Contains(out, "life.token\tset\tenv LIFE_TOKEN") || strings.Contains(out, lifeToken) {
		t.Errorf("secret list:\n%s", out)
	}
	// list --json: set/unset per field, never a value.
	out, _, code = cli(t, "", "ext", "list", "--json")
	if code != 0 || strings.Contains(out, lifeToken) {
		t.Fatalf("list --json: %d\n%s", code, out)
	}
	var list []struct {
		Name   string `json:"name"`
		Config []struct {
			Name string `json:"name"`
			Set  bool   `json:"set"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, e := range list {
		for _, f := range e.Config {
			set[f.Name] = f.Set
		}
	}
	if !set["token"] || set["mode"] || len(set) != 3 {
		t.Errorf("list --json config = %v", set)
	}

	// A group-readable store is refused with the fix in the message.
	os.Chmod(conn, 0o644)
	_, errOut, code = cli(t, "", "ext", "secret", "list")
	if code == 0 || !strings.Contains(errOut, "chmod 600 "+conn) {
		t.Errorf("0644 store: %d %s", code, errOut)
	}
	os.Chmod(conn, 0o600)

	out, _, code = cli(t, "", "ext", "secret", "unset", "life", "token")
	if code != 0 || !strings.Contains(out, "removed secret life.token") {
		t.Errorf("unset: %d %s", code, out)
	}
	if out, _, _ := cli(t, "", "ext", "secret", "list", "life"); !strings.Contains(out, "life.token\tunset") {
		t.Errorf("after unset:\n%s", out)
	}
}

// TestInvalidConfigKeepsTheExtensionOff: at session start an enabled
// extension whose config fails its schema is skipped with a warning naming
// the field and the rule; the session runs without it.
func TestInvalidConfigKeepsTheExtensionOff(t *testing.T) {
	cfg, _ := installLife(t)
	ctx := t.Context()
	if err := secrets.NewFile(cfg).Set(ctx, "life", "token", secrets.New(lifeToken)); err != nil {
		t.Fatal(err)
	}
	st := settings.New(cfg)
	if err := st.SetCapabilityConfig(ctx, "life", map[string]any{"mode": "fast"}); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "life"); code != 0 {
		t.Fatal(errOut)
	}
	if err := st.SetCapabilityConfig(ctx, "life", map[string]any{"mode": "bogus"}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, "/quit\n", "session", "--json")
	if code != 0 {
		t.Fatalf("session: %d %s", code, errOut)
	}
	var warned bool
	for _, ev := range events(t, out) {
		if ev["event"] == "warning" && strings.Contains(ev["message"].(string), "life") && strings.Contains(ev["message"].(string), "mode") {
			warned = true
		}
		if ev["event"] == "ready" && ev["extensions"] != float64(0) {
			t.Errorf("the invalid extension was loaded: %v", ev)
		}
	}
	if !warned || strings.Contains(out+errOut, lifeToken) {
		t.Errorf("no warning naming the field:\n%s", out)
	}
}

// TestRemoveForgetsSecrets: removing an extension deletes its secrets.
func TestRemoveForgetsSecrets(t *testing.T) {
	cfg, _ := installLife(t)
	store := secrets.NewFile(cfg)
	if err := store.Set(t.Context(), "life", "token", secrets.New(lifeToken)); err != nil {
		t.Fatal(err)
	}
	if err := store.Set(t.Context(), "other", "token", secrets.New("tok-other-1")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, "", "ext", "remove", "life"); code != 0 {
		t.Fatal(errOut)
	}
	all, err := store.All(t.Context())
	if err != nil || len(all["life"]) != 0 || all["other"]["token"].Reveal() != "tok-other-1" {
		t.Errorf("after remove: %v %v", all, err)
	}
}

// ext config get|set|unset: plain fields validated against config_schema
// with a field-path error, a secret refused with a pointer to ext secret
// set, and nothing written when a value is refused.
func TestExtConfig(t *testing.T) {
	cfg, _ := installLife(t)
	st := filepath.Join(cfg, "settings.toml")
	out, errOut, code := cli(t, "", "ext", "config", "set", "life", "mode", "slow")
	if code != 0 {
		t.Fatalf("set mode: %s", errOut)
	}
	mustContain(t, "set", out, "set life.mode = slow")
	if out, _, _ := cli(t, "", "ext", "config", "get", "life", "mode"); strings.TrimSpace(out) != "slow" {
		t.Fatalf("get mode = %q", out)
	}
	before := fileBytes(t, st)
	_, errOut, code = cli(t, "", "ext", "config", "set", "life", "mode", "warp")
	if code == 0 {
		t.Fatal("an out-of-enum value was accepted")
	}
	mustContain(t, "bad enum", errOut, "life.mode", "not one of fast, slow")
	_, errOut, code = cli(t, "", "ext", "config", "set", "life", "token", "tok-leaked")
	if code == 0 || strings.Contains(errOut, "tok-leaked") {
		t.Fatalf("a secret via ext config: %d %q", code, errOut)
	}
	mustContain(t, "secret", errOut, "yolop ext secret set life token")
	if !bytes.Equal(before, fileBytes(t, st)) {
		t.Fatal("a refused set changed settings.toml")
	}
	if out, _, code := cli(t, "", "ext", "config", "unset", "life", "mode"); code != 0 || !strings.Contains(out, "unset life.mode") {
		t.Fatalf("unset: %d %s", code, out)
	}
	_, errOut, code = cli(t, "", "ext", "config", "set", "life")
	if code == 0 || !strings.Contains(errOut, "missing <field>") {
		t.Fatalf("missing args: %d %s", code, errOut)
	}
}
