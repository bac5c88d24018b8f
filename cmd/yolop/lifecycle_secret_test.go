package main

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"yolop.dev/core/yep"
	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
)

// TestEnableAsksInAScriptedSession: /enable of an extension with required
// fields unset asks for each through the session's ask path — the secret
// masked and acknowledged "(saved)", the enum as a selector — and stores
// the secret in connections.toml, the rest in settings.toml.
func TestEnableAsksInAScriptedSession(t *testing.T) {
	cfg, initFile := installLife(t)
	script := strings.Join([]string{
		"/enable life",
		"2",       // mode: a selector, "2" is slow
		lifeToken, // token: masked
		`/call echo {"text":"hi"}`,
		"/quit",
	}, "\n")
	out, errOut, code := cli(t, script, "session", "--json")
	if code != 0 {
		t.Fatalf("session: %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, lifeToken) {
		t.Fatalf("the secret was printed:\n%s\n%s", out, errOut)
	}
	var asks []map[string]any
	var saved, enabled, result bool
	for _, ev := range events(t, out) {
		switch ev["event"] {
		case "ask":
			asks = append(asks, ev)
		case "ask_result":
			saved = saved || ev["saved"] == true
		case "enabled":
			enabled = true
		case "result":
			result = ev["output"] == "hi"
		}
	}
	if len(asks) != 2 || asks[0]["secret"] == true || len(asks[0]["options"].([]any)) != 2 || asks[1]["secret"] != true {
		t.Fatalf("questions = %v", asks)
	}
	if !saved || !enabled || !result {
		t.Fatalf("saved=%v enabled=%v result=%v\n%s", saved, enabled, result, out)
	}
	s, ok, err := secrets.NewFile(cfg).Get(context.Background(), "life", "token")
	if err != nil || !ok || s.Reveal() != lifeToken {
		t.Fatalf("stored secret: %v %v", ok, err)
	}
	st, _ := os.ReadFile(filepath.Join(cfg, settings.FileName))
	if !strings.Contains(string(st), "slow") || strings.Contains(string(st), "tok-") || !strings.Contains(string(st), "ext:life") {
		t.Errorf("settings.toml:\n%s", st)
	}
	d := readInit(t, initFile)
	if d.Env["LIFE_TOKEN"] != lifeToken || strings.Contains(string(d.Params.Config), "tok-") {
		t.Errorf("server env token %q, initialize.config %s", d.Env["LIFE_TOKEN"], d.Params.Config)
	}
}

type initDump struct {
	Params yep.InitializeParams `json:"params"`
	Env    map[string]string    `json:"env"`
}

func readInit(t *testing.T, path string) initDump {
	t.Helper()
	var d initDump
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d
}

// waitOut polls a buffer until it holds want.
func waitOut(t *testing.T, b *syncBuf, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in:\n%s", want, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSecretLifecycle runs set secret → enable → session → call → config
// change → restart → disable with every log at trace level, then hunts for
// the secret: the server got it as env and never in initialize.config, and
// it is found only in connections.toml (mode 0600) — in no other file of
// the config dir, no log line and no output.
func TestSecretLifecycle(t *testing.T) {
	t.Setenv("YOLOP_LOG", "trace")
	cfg, initFile := installLife(t)
	var transcript strings.Builder
	record := func(out, errOut string) { transcript.WriteString(out + "\n" + errOut + "\n") }

	out, errOut, code := cli(t, lifeToken+"\n", "ext", "secret", "set", "life", "token", "--stdin")
	record(out, errOut)
	if code != 0 {
		t.Fatalf("secret set: %s", errOut)
	}
	// No terminal: enable lists what is missing and how to set it.
	out, errOut, code = cli(t, "", "ext", "enable", "life")
	record(out, errOut)
	if code == 0 || !strings.Contains(errOut, "mode (one of fast, slow): add mode = <value>") || strings.Contains(errOut, "yolop ext secret set life token") {
		t.Fatalf("enable without a terminal: %d\n%s", code, errOut)
	}
	ctx := context.Background()
	st := settings.New(cfg)
	if err := st.SetCapabilityConfig(ctx, "life", map[string]any{"mode": "fast"}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = cli(t, "", "ext", "enable", "life")
	record(out, errOut)
	if code != 0 {
		t.Fatalf("enable: %s", errOut)
	}

	// The session, driven line by line.
	inR, inW := io.Pipe()
	var sout, serr syncBuf
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"session", "--json"}, inR, &sout, &serr) }()
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitOut(t, &sout, `"event":"ready"`)
	send(`/call env {}`)
	waitOut(t, &sout, `"tool":"env"`)
	send(`/call echo {"text":"my token is ` + lifeToken + `"}`)
	waitOut(t, &sout, `"output":"my token is [redacted:life.token]"`)
	send(`/call log {"message":"logging ` + lifeToken + `"}`)
	waitOut(t, &sout, `"tool":"log"`)

	d := readInit(t, initFile)
	if d.Env["LIFE_TOKEN"] != lifeToken {
		t.Errorf("the server's env lacks the secret: LIFE_TOKEN=%q", d.Env["LIFE_TOKEN"])
	}
	var icfg map[string]any
	json.Unmarshal(d.Params.Config, &icfg)
	if _, has := icfg["token"]; has || icfg["mode"] != "fast" || strings.Contains(string(d.Params.Config), lifeToken) {
		t.Errorf("initialize.config = %s", d.Params.Config)
	}

	// A config change the server wants a restart for.
	if err := st.SetCapabilityConfig(ctx, "life", map[string]any{"mode": "slow", "restart": true}); err != nil {
		t.Fatal(err)
	}
	waitOut(t, &sout, `"data":{"extension":"life","restarted":true},"event":"config.changed"`)
	d = readInit(t, initFile)
	json.Unmarshal(d.Params.Config, &icfg)
	if icfg["mode"] != "slow" || d.Env["LIFE_TOKEN"] != lifeToken {
		t.Errorf("after the restart: config %s", d.Params.Config)
	}
	send(`/call echo {"text":"after restart"}`)
	waitOut(t, &sout, `"output":"after restart"`)
	send(`/disable life`)
	waitOut(t, &sout, `"event":"disabled"`)
	send(`/call echo {"text":"gone"}`)
	waitOut(t, &sout, `no tool \"echo\"`)
	send(`/quit`)
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("session exited %d: %s", code, serr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the session did not end")
	}
	record(sout.String(), serr.String())

	all := transcript.String()
	if strings.Contains(all, lifeToken) {
		t.Errorf("the secret is in the output or a log line:\n%s", all)
	}
	if !strings.Contains(serr.String(), "[DEBUG]") || !strings.Contains(serr.String(), "logging [redacted:life.token]") {
		t.Errorf("trace logs not captured or the server's log line missing:\n%s", serr.String())
	}
	var found []string
	filepath.WalkDir(cfg, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), lifeToken) {
			rel, _ := filepath.Rel(cfg, p)
			found = append(found, rel)
		}
		return nil
	})
	if len(found) != 1 || found[0] != secrets.FileName {
		t.Errorf("the secret is in %v, want only %s", found, secrets.FileName)
	}
	if fi, err := os.Lstat(filepath.Join(cfg, secrets.FileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("connections.toml mode: %v %v", fi, err)
	}
}

// TestSetExtensionSecretInASession: the agent-facing tool refuses a value
// the agent passes, asks the user (masked, "(saved)") when it passes none,
// and the running extension restarts with the new secret in its env.
func TestSetExtensionSecretInASession(t *testing.T) {
	cfg, initFile := installLife(t)
	ctx := context.Background()
	if err := secrets.NewFile(cfg).Set(ctx, "life", "token", secrets.New(lifeToken)); err != nil {
		t.Fatal(err)
	}
	if err := settings.New(cfg).SetCapabilityConfig(ctx, "life", map[string]any{"mode": "fast"}); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "life"); code != 0 {
		t.Fatal(errOut)
	}
	rotated := lifeToken + "-rotated"
	script := strings.Join([]string{
		`/call echo {"text":"start"}`,
		`/call set_extension_secret {"extension":"life","field":"token","value":"tok-from-the-agent"}`,
		`/call set_extension_secret {"extension":"life","field":"token"}`,
		rotated,
		`/call echo {"text":"` + rotated + `"}`,
		"/quit",
	}, "\n")
	out, errOut, code := cli(t, script, "session", "--json")
	if code != 0 {
		t.Fatalf("session: %d %s", code, errOut)
	}
	if strings.Contains(out+errOut, "tok-from-the-agent") || strings.Contains(out+errOut, rotated) || strings.Contains(out+errOut, lifeToken) {
		t.Fatalf("a secret was printed:\n%s\n%s", out, errOut)
	}
	var results, errs []map[string]any
	var asks []map[string]any
	for _, ev := range events(t, out) {
		switch ev["event"] {
		case "result":
			results = append(results, ev)
		case "error":
			errs = append(errs, ev)
		case "ask":
			asks = append(asks, ev)
		}
	}
	if len(results) != 3 {
		t.Fatalf("results = %v", results)
	}
	// The agent's value is refused before the tool runs: the tool's schema
	// takes only extension and field, and the message names the key,
	// never the value.
	if len(errs) != 1 || !strings.Contains(errs[0]["message"].(string), `arguments of tool "set_extension_secret"`) || !strings.Contains(errs[0]["message"].(string), "value") {
		t.Errorf("agent value = %v", errs)
	}
	if results[1]["is_error"] == true || !strings.HasPrefix(results[1]["output"].(string), "(saved)") {
		t.Errorf("user entry = %v", results[1])
	}
	if len(asks) != 1 || asks[0]["secret"] != true {
		t.Errorf("asks = %v", asks)
	}
	// The echo of the new value is already redacted, under its label.
	if results[2]["output"] != "[redacted:life.token]" {
		t.Errorf("echo of the rotated secret = %v", results[2]["output"])
	}
	if s, _, _ := secrets.NewFile(cfg).Get(ctx, "life", "token"); s.Reveal() != rotated {
		t.Error("the user's answer was not stored")
	}
	if d := readInit(t, initFile); d.Env["LIFE_TOKEN"] != rotated {
		t.Errorf("the running extension did not restart with the new secret (LIFE_TOKEN=%q)", d.Env["LIFE_TOKEN"])
	}
}
