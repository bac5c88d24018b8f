package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/agent/scripted"
	"yolop.dev/harness/secrets"
)

// TestModelKeyCommand: the key is read from stdin (no terminal), stored
// in connections.toml with mode 0600, shown by yolop model show only as
// where it is, refused on the command line, and deleted with --delete.
func TestModelKeyCommand(t *testing.T) {
	cfg := runEnv(t)
	const key = "sk-model-key-command-7f3a"
	out, errOut, code := cli(t, key+"\n", "model", "key", "openai")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "(saved)") || strings.Contains(out+errOut, key) {
		t.Fatalf("stdout %q stderr %q", out, errOut)
	}
	conn := filepath.Join(cfg, secrets.FileName)
	fi, err := os.Stat(conn)
	if err != nil || fi.Mode().Perm() != secrets.Mode {
		t.Fatalf("connections.toml: %v, %v; want mode 0600", fi, err)
	}

	out, errOut, code = cli(t, "", "model", "show", "--model", "openai/gpt-4.1")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"openai (from --model)", "gpt-4.1 (from --model)", "https://api.openai.com/v1/ (from default)", "API key         set in " + conn} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	if out, _, _ := cli(t, "", "model", "show", "--model", "openai/gpt-4.1"); !strings.Contains(out, "API key         from OPENAI_API_KEY") || strings.Contains(out, "sk-from-env") {
		t.Errorf("show with the env key:\n%s", out)
	}
	t.Setenv("OPENAI_API_KEY", "")
	if out, _, _ := cli(t, "", "model", "show", "--model", "anthropic/claude-sonnet-4-5"); !strings.Contains(out, "API key         not set") {
		t.Errorf("show for anthropic:\n%s", out)
	}

	_, errOut, code = cli(t, "", "model", "key", "openai", "sk-on-the-command-line")
	if code == 0 || !strings.Contains(errOut, "refusing an API key given on the command line") || strings.Contains(errOut, "sk-on-the-command-line") {
		t.Errorf("key as an argument: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{{"model", "key", "mistral"}, {"model", "key", "ext:local"}} {
		if _, errOut, code := cli(t, "sk-x\n", args...); code == 0 || !strings.Contains(errOut, `"openai"`) && !strings.Contains(errOut, "yolop stores no API key for it") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if _, errOut, code := cli(t, "\n", "model", "key", "anthropic"); code == 0 || !strings.Contains(errOut, "nothing was saved") {
		t.Errorf("an empty key: exit %d, stderr %q", code, errOut)
	}

	out, _, code = cli(t, "", "model", "key", "--delete", "openai")
	if code != 0 || !strings.Contains(out, "removed the openai API key") {
		t.Fatalf("delete: exit %d, %q", code, out)
	}
	if b, _ := os.ReadFile(conn); strings.Contains(string(b), key) {
		t.Fatal("the key is still in connections.toml after --delete")
	}
}

// TestModelKeyCanary stores a distinctive key with yolop model key, runs
// a turn against a scripted model that accepts only that key (so the key
// was used), with every log on, then looks for the key everywhere yolop
// writes: stdout, stderr, every file under the config directory, the home
// directory and the workspace, and what the model was sent. It is only in
// connections.toml.
func TestModelKeyCanary(t *testing.T) {
	cfg := runEnv(t)
	t.Setenv("YOLOP_LOG", "trace")
	const canary = "sk-canary-9d41c0ffee-only-in-connections"
	out, errOut, code := cli(t, canary+"\n", "model", "key", "openai")
	if code != 0 {
		t.Fatalf("model key: exit %d: %s", code, errOut)
	}
	outputs := out + errOut
	srv := modelServer(t, `{"steps": [
		{"when": {"user": "check"}, "reply": {"tool_calls": [{"name": "bash", "arguments": {"command": "env; echo done"}}]}},
		{"when": {"tool_result": {"tool": "bash", "contains": "done"}}, "reply": {"text": "checked"}}
	]}`, scripted.Options{APIKey: canary})
	ws := t.TempDir()
	for _, args := range [][]string{
		{"run", "-p", "check", "--model", "openai/scripted", "--workspace", ws, "--json"},
		{"model", "show", "--model", "openai/scripted"},
	} {
		out, errOut, code := cli(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		outputs += out + errOut
	}
	if !strings.Contains(outputs, `"answer":"checked"`) {
		t.Fatalf("the turn did not complete:\n%s", outputs)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	for _, r := range reqs {
		if r.Status != 200 || r.Header.Get("Authorization") != "Bearer "+canary {
			t.Fatalf("a request without the stored key: status %d", r.Status)
		}
		if strings.Contains(string(r.Body), canary) {
			t.Fatal("the key reached the model's context (a request body holds it)")
		}
	}

	if strings.Contains(outputs, canary) {
		t.Error("the key is in yolop's output")
	}
	if strings.Contains(outputs, "[redacted:yolop.model") {
		t.Error("something tried to print the key (the scrubber caught it)")
	}
	conn := filepath.Join(cfg, secrets.FileName)
	found := map[string]bool{}
	for _, root := range []string{cfg, os.Getenv("HOME"), ws} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), canary) {
				found[p] = true
			}
			return nil
		})
	}
	if !found[conn] || len(found) != 1 {
		t.Errorf("the key is in %v; want only %s", found, conn)
	}
}
