package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"yolop.dev/packaging"
)

// isolate points the config directory at a fresh temp dir.
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("YOLOP_CONFIG_DIR", dir)
	return dir
}

// gitRepo turns dir into a git repository with everything committed and
// returns its file:// URL; file URLs are allowed for the test.
func gitRepo(t *testing.T, dir string) string {
	t.Helper()
	t.Setenv(allowFileGitEnv, "1")
	gitRun(t, dir, "init", "-q", "-b", "main")
	gitCommit(t, dir, "initial")
	return "file://" + dir
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitCommit(t *testing.T, dir, msg string) string {
	t.Helper()
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", msg)
	return gitRun(t, dir, "rev-parse", "HEAD")
}

// widen adds a tool to the package's manifest.
func widen(t *testing.T, pkg string) {
	t.Helper()
	p := filepath.Join(pkg, "plugin.json")
	var m map[string]any
	b, _ := os.ReadFile(p)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	y := m["yolop"].(map[string]any)
	y["tools"] = append(y["tools"].([]any), map[string]any{"name": "shout", "description": "Shout the text."})
	m["version"] = "0.2.0"
	b, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readLock(t *testing.T, cfg string) *packaging.Lockfile {
	t.Helper()
	l, err := packaging.ReadLockFile(filepath.Join(cfg, packaging.LockFileName))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func fileBytes(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b
}

func mustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

// TestExtLifecycle is the scripted end-to-end run of issue 4: install →
// consent → enable → session /call → update with a widened manifest →
// disable → remove, for a path and a git source.
func TestExtLifecycle(t *testing.T) {
	for _, kind := range []string{"path", "git"} {
		t.Run(kind, func(t *testing.T) {
			cfg := isolate(t)
			pkg := echoPackage(t)
			src := pkg
			if kind == "git" {
				src = gitRepo(t, pkg)
			}
			lockPath := filepath.Join(cfg, packaging.LockFileName)
			settingsPath := filepath.Join(cfg, "settings.toml")

			// No terminal, no --yes: the summary is shown, nothing lands.
			out, errOut, code := cli(t, "", "ext", "install", src)
			if code == 0 {
				t.Fatalf("install without consent succeeded:\n%s", out)
			}
			mustContain(t, "refused install stdout", out, "Extension echo 0.1.0", "echo", "count", "MATCHES EVERY TOOL CALL")
			mustContain(t, "refused install stderr", errOut, "re-run with --yes", "yolop ext install "+src+" --yes")
			if _, err := os.Stat(lockPath); !os.IsNotExist(err) {
				t.Fatal("a refused install wrote extensions.lock")
			}
			if ents, _ := os.ReadDir(filepath.Join(cfg, "extensions")); len(ents) != 0 {
				t.Fatalf("a refused install left %v in the store", ents)
			}

			// --yes: the summary is printed before the install line.
			out, errOut, code = cli(t, "", "ext", "install", src, "--yes")
			if code != 0 {
				t.Fatalf("install --yes exited %d: %s", code, errOut)
			}
			si, ii := strings.Index(out, "Extension echo 0.1.0"), strings.Index(out, "installed echo 0.1.0")
			if si < 0 || ii < 0 || si > ii {
				t.Fatalf("summary not printed before the install:\n%s", out)
			}
			mustContain(t, "install output", out, "yolop ext enable echo")
			e := readLock(t, cfg).Entry("echo")
			if e == nil || string(e.Kind) != kind {
				t.Fatalf("lock entry = %+v", e)
			}
			if kind == "git" {
				if head := gitRun(t, pkg, "rev-parse", "HEAD"); e.Commit != head {
					t.Fatalf("lock commit %s, repository HEAD %s", e.Commit, head)
				}
				if _, err := os.Stat(filepath.Join(cfg, "extensions", "echo", "bin", "yolop-extension-echo")); err != nil {
					t.Fatalf("git package not in the store: %v", err)
				}
			}

			// list --json
			out, _, code = cli(t, "", "ext", "list", "--json")
			var list []map[string]any
			if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list) != 1 {
				t.Fatalf("list --json = %d %v %s", code, err, out)
			}
			if list[0]["name"] != "echo" || list[0]["enabled"] != false || list[0]["health"] != "ok" || list[0]["path_source"] != (kind == "path") {
				t.Fatalf("list entry = %v", list[0])
			}
			out, _, _ = cli(t, "", "ext", "list")
			if kind == "path" {
				mustContain(t, "list", out, "path (live, not hash-verified)")
			} else {
				mustContain(t, "list", out, "commit "+e.Commit)
			}

			// enable
			out, errOut, code = cli(t, "", "ext", "enable", "echo")
			if code != 0 {
				t.Fatalf("enable exited %d: %s", code, errOut)
			}
			mustContain(t, "settings.toml after enable", string(fileBytes(t, settingsPath)), "[[capabilities]]", "ref = 'ext:echo'")

			// session /call
			out, errOut, code = cli(t, "/call echo {\"text\":\"from the store\"}\n/tools\n/quit\n", "session")
			if code != 0 {
				t.Fatalf("session exited %d: %s", code, errOut)
			}
			mustContain(t, "session", out, "1 extension(s)", "from the store", "install_extension", "list_extensions")

			// update with a widened manifest
			widen(t, pkg)
			if kind == "git" {
				gitCommit(t, pkg, "add shout")
				// This tests consent; the update cooldown would hold the new commit.
				f, err := os.OpenFile(settingsPath, os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				_, err = f.WriteString("\n[update]\ncooldown = \"0\"\n")
				if cerr := f.Close(); err != nil || cerr != nil {
					t.Fatal(err, cerr)
				}
			}
			lockBefore := fileBytes(t, lockPath)
			out, errOut, code = cli(t, "", "ext", "update", "echo")
			if code == 0 {
				t.Fatalf("a widening update went through without consent:\n%s", out)
			}
			mustContain(t, "refused update stdout", out, "Contribution diff for echo", "+ new tool shout")
			mustContain(t, "refused update stderr", errOut, "yolop ext update echo --yes")
			if !bytes.Equal(lockBefore, fileBytes(t, lockPath)) {
				t.Fatal("a refused update changed extensions.lock")
			}
			out, errOut, code = cli(t, "", "ext", "update", "echo", "--yes")
			if code != 0 {
				t.Fatalf("update --yes exited %d: %s", code, errOut)
			}
			mustContain(t, "update output", out, "+ new tool shout", "updated echo to 0.2.0")
			e = readLock(t, cfg).Entry("echo")
			if e.Version != "0.2.0" {
				t.Fatalf("lock after update = %+v", e)
			}
			lockAfter := fileBytes(t, lockPath)
			out, _, code = cli(t, "", "ext", "update")
			if code != 0 || !strings.Contains(out, "echo is up to date") || !bytes.Equal(lockAfter, fileBytes(t, lockPath)) {
				t.Fatalf("identical update: exit %d, %s (lock changed: %v)", code, out, !bytes.Equal(lockAfter, fileBytes(t, lockPath)))
			}

			// disable, remove
			out, _, code = cli(t, "", "ext", "disable", "echo")
			if code != 0 || !strings.Contains(out, "disabled echo") || strings.Contains(string(fileBytes(t, settingsPath)), "ext:echo") {
				t.Fatalf("disable: %d %s\n%s", code, out, fileBytes(t, settingsPath))
			}
			out, _, _ = cli(t, "/quit\n", "session")
			mustContain(t, "session after disable", out, "0 extension(s)")
			cli(t, "", "ext", "enable", "echo")
			out, errOut, code = cli(t, "", "ext", "remove", "echo")
			if code != 0 || !strings.Contains(out, "removed echo") {
				t.Fatalf("remove: %d %s %s", code, out, errOut)
			}
			if readLock(t, cfg).Entry("echo") != nil || strings.Contains(string(fileBytes(t, settingsPath)), "ext:echo") {
				t.Fatal("remove left the lock entry or the settings entry")
			}
			if _, err := os.Stat(filepath.Join(cfg, "extensions", "echo")); !os.IsNotExist(err) {
				t.Fatal("remove left the store copy")
			}
			if _, err := os.Stat(filepath.Join(pkg, "plugin.json")); err != nil {
				t.Fatal("remove touched the source directory")
			}
			if _, errOut, code = cli(t, "", "ext", "remove", "echo"); code == 0 || !strings.Contains(errOut, "not installed") {
				t.Fatalf("removing twice: %d %s", code, errOut)
			}
		})
	}
}

func TestTamperedPackageRefusedAndSkipped(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	src := gitRepo(t, pkg)
	if _, errOut, code := cli(t, "", "ext", "install", src, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code != 0 {
		t.Fatal(errOut)
	}
	srv := filepath.Join(cfg, "extensions", "echo", "bin", "yolop-extension-echo")
	if err := os.WriteFile(srv, []byte("#!/bin/sh\necho pwned\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The session starts without it, with a warning naming the file.
	out, errOut, code := cli(t, "/quit\n", "session")
	if code != 0 {
		t.Fatalf("a tampered package stopped the session: %d %s", code, errOut)
	}
	mustContain(t, "session", out, "warning: skipping enabled extension echo", "changed: bin/yolop-extension-echo", "0 extension(s)")
	// enable refuses it.
	cli(t, "", "ext", "disable", "echo")
	_, errOut, code = cli(t, "", "ext", "enable", "echo")
	if code == 0 {
		t.Fatal("enable accepted a tampered package")
	}
	mustContain(t, "enable", errOut, "cannot enable echo", "bin/yolop-extension-echo", "yolop ext update echo")
	// list shows the changed file.
	out, _, _ = cli(t, "", "ext", "list")
	mustContain(t, "list", out, "warning", "bin/yolop-extension-echo")
	// update re-approves: refused without --yes, restores with it.
	_, errOut, code = cli(t, "", "ext", "update", "echo")
	if code == 0 {
		t.Fatal("re-approving a tampered package needed no consent")
	}
	out, errOut, code = cli(t, "", "ext", "update", "echo", "--yes")
	if code != 0 {
		t.Fatalf("update --yes: %s", errOut)
	}
	mustContain(t, "update", out, "was changed on disk")
	if b, _ := os.ReadFile(srv); strings.Contains(string(b), "pwned") {
		t.Fatal("update left the tampered file")
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code != 0 {
		t.Fatalf("enable after re-approval: %s", errOut)
	}
}

func TestMalformedSettingsIsClearAndWritesNothing(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	bad := "[[capabilities]]\nref = \"ext:echo\"\nconfig = {\n"
	sp := filepath.Join(cfg, "settings.toml")
	os.WriteFile(sp, []byte(bad), 0o644)
	_, errOut, code := cli(t, "", "ext", "enable", "echo")
	if code == 0 {
		t.Fatal("enable over a malformed settings.toml succeeded")
	}
	mustContain(t, "enable", errOut, sp+":3:", "fix the file by hand")
	if string(fileBytes(t, sp)) != bad {
		t.Fatal("settings.toml was rewritten")
	}
	// The session still starts, with a warning.
	out, _, code := cli(t, "/quit\n", "session")
	if code != 0 {
		t.Fatal("a malformed settings.toml stopped the session")
	}
	mustContain(t, "session", out, "warning: no extensions loaded", sp)
}

func TestUnknownSettingsKeysSurviveEnable(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	cli(t, "", "ext", "install", pkg, "--yes")
	sp := filepath.Join(cfg, "settings.toml")
	os.WriteFile(sp, []byte("theme = \"dark\"\n[[capabilities]]\nref = \"builtin:fs\"\nroots = [\"/src\"]\n"), 0o644)
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code != 0 {
		t.Fatal(errOut)
	}
	mustContain(t, "settings.toml", string(fileBytes(t, sp)), "theme = 'dark'", "ref = 'builtin:fs'", "roots = ['/src']", "ref = 'ext:echo'")
}

func TestListJSONShape(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	// A config schema with a secret and a plain field.
	p := filepath.Join(pkg, "plugin.json")
	var m map[string]any
	b, _ := os.ReadFile(p)
	json.Unmarshal(b, &m)
	m["yolop"].(map[string]any)["config_schema"] = map[string]any{"type": "object", "properties": map[string]any{
		"greeting": map[string]any{"type": "string"},
		"token":    map[string]any{"type": "string", "secret": true},
	}}
	b, _ = json.Marshal(m)
	os.WriteFile(p, b, 0o644)
	cli(t, "", "ext", "install", pkg, "--yes")
	os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[[capabilities]]\nref = \"ext:echo\"\nconfig = { greeting = \"s3cr3t-value\" }\n\n[[capabilities]]\nref = \"ext:ghost\"\n"), 0o644)
	out, errOut, code := cli(t, "", "ext", "list", "--json")
	if code != 0 {
		t.Fatal(errOut)
	}
	if strings.Contains(out, "s3cr3t-value") {
		t.Fatal("list printed a config value")
	}
	var list []struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Source     string   `json:"source"`
		PathSource bool     `json:"path_source"`
		Installed  bool     `json:"installed"`
		Enabled    bool     `json:"enabled"`
		Health     string   `json:"health"`
		Warnings   []string `json:"warnings"`
		Tools      []string `json:"tools"`
		Config     []struct {
			Name   string `json:"name"`
			Secret bool   `json:"secret"`
			Set    bool   `json:"set"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("list = %s", out)
	}
	echo, ghost := list[0], list[1]
	if echo.Name != "echo" || !echo.Enabled || !echo.Installed || !echo.PathSource || echo.Health != "ok" || echo.Version != "0.1.0" ||
		strings.Join(echo.Tools, ",") != "echo,count,reverse" || len(echo.Config) != 2 ||
		echo.Config[0].Name != "greeting" || !echo.Config[0].Set || echo.Config[1].Name != "token" || !echo.Config[1].Secret || echo.Config[1].Set {
		t.Fatalf("echo = %+v", echo)
	}
	if ghost.Name != "ghost" || ghost.Installed || ghost.Health != "warning" || len(ghost.Warnings) != 1 || !strings.Contains(ghost.Warnings[0], "not installed") {
		t.Fatalf("ghost = %+v", ghost)
	}
	out, _, _ = cli(t, "", "ext", "list")
	mustContain(t, "list text", out, "greeting (set)", "token (unset secret)")
}

func TestInstallMissingRevIsClear(t *testing.T) {
	cfg := isolate(t)
	src := gitRepo(t, echoPackage(t))
	_, errOut, code := cli(t, "", "ext", "install", src+"@no-such-tag", "--yes")
	if code == 0 {
		t.Fatal("installing a missing rev succeeded")
	}
	mustContain(t, "stderr", errOut, "no-such-tag", "not found", "main")
	if _, err := os.Stat(filepath.Join(cfg, packaging.LockFileName)); !os.IsNotExist(err) {
		t.Fatal("a failed install wrote the lock")
	}
}

func TestInstallRefusesFileURLWithoutTheTestKnob(t *testing.T) {
	isolate(t)
	dir := echoPackage(t)
	gitRepo(t, dir)
	t.Setenv(allowFileGitEnv, "")
	_, errOut, code := cli(t, "", "ext", "install", "file://"+dir, "--yes")
	if code == 0 || !strings.Contains(errOut, "file://") {
		t.Fatalf("file:// accepted without the knob: %d %s", code, errOut)
	}
}

func TestConcurrentInstallsFromTheCLI(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	src := gitRepo(t, pkg)
	var wg sync.WaitGroup
	codes := make([]int, 3)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, codes[i] = cli(t, "", "ext", "install", src, "--yes")
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 0 {
			t.Fatalf("install %d exited %d", i, c)
		}
	}
	l := readLock(t, cfg)
	if len(l.Extensions) != 1 || l.Extensions[0].Name != "echo" {
		t.Fatalf("lock after concurrent installs = %+v", l.Extensions)
	}
	out, _, _ := cli(t, "", "ext", "list", "--json")
	if !strings.Contains(out, `"health": "ok"`) {
		t.Fatalf("store unhealthy after concurrent installs:\n%s", out)
	}
	ents, _ := os.ReadDir(filepath.Join(cfg, "extensions"))
	for _, e := range ents {
		if e.Name() != "echo" {
			t.Fatalf("leftover %s in the store", e.Name())
		}
	}
}

func TestCompletion(t *testing.T) {
	isolate(t)
	cli(t, "", "ext", "install", echoPackage(t), "--yes")
	out, errOut, code := cli(t, "", "completion", "bash")
	if code != 0 || !strings.Contains(out, "__start_yolop") {
		t.Fatalf("completion bash: %d %s", code, errOut)
	}
	out, _, _ = cli(t, "", "__complete", "ext", "enable", "")
	if !strings.HasPrefix(out, "echo\n") {
		t.Fatalf("enable completion = %q", out)
	}
	out, _, _ = cli(t, "", "__complete", "ext", "disable", "")
	if strings.Contains(out, "echo") {
		t.Fatalf("disable completed a disabled extension: %q", out)
	}
}

func TestCrateSourceGoesThroughTheCrateFetcher(t *testing.T) {
	isolate(t)
	_, errOut, code := cli(t, "", "ext", "install", "crates.io:yolop-extension-nothing", "--yes", "--registry", "sparse+http://127.0.0.1:1/")
	if code == 0 || !strings.Contains(errOut, "yolop-extension-nothing") {
		t.Fatalf("crate install: %d %s", code, errOut)
	}
}

// TestSessionBuiltinExtensions drives the built-in extensions capability
// from the REPL: list, enable (live in the session), and an install that is
// refused because the capability has no way to ask for consent.
func TestSessionBuiltinExtensions(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	other := echoPackage(t)
	mp := filepath.Join(other, "plugin.json")
	os.WriteFile(mp, bytes.Replace(fileBytes(t, mp), []byte(`"name": "echo"`), []byte(`"name": "echo2"`), 1), 0o644)
	// Same name and manifest, another source: a switch needs consent too.
	same := echoPackage(t)
	script := strings.Join([]string{
		`/call list_extensions`,
		`/call enable_extension {"name":"echo"}`,
		`/call install_extension {"source":"` + other + `"}`,
		`n`, // the session asks the user, who declines
		`/call install_extension {"source":"` + same + `"}`,
		`no`,
		`/quit`,
	}, "\n")
	out, errOut, code := cli(t, script, "session", "--json")
	if code != 0 {
		t.Fatalf("session: %d %s", code, errOut)
	}
	var results []map[string]any
	for _, ev := range events(t, out) {
		if ev["event"] == "result" {
			results = append(results, ev)
		}
	}
	if len(results) != 4 {
		t.Fatalf("results = %v\n%s", results, out)
	}
	if !strings.Contains(results[0]["output"].(string), "echo 0.1.0  disabled  ok") {
		t.Fatalf("list_extensions = %v", results[0])
	}
	if results[1]["is_error"] == true || !strings.Contains(string(fileBytes(t, filepath.Join(cfg, "settings.toml"))), "ext:echo") {
		t.Fatalf("enable_extension = %v", results[1])
	}
	if results[2]["is_error"] != true || !strings.Contains(results[2]["output"].(string), "declined") {
		t.Fatalf("install_extension declined by the user = %v", results[2])
	}
	if !strings.Contains(out, `"event":"ask"`) || !strings.Contains(out, "The agent wants to install an extension from "+other) {
		t.Fatalf("the install was not put to the user:\n%s", out)
	}
	if results[3]["is_error"] != true || !strings.Contains(results[3]["output"].(string), "not installed") {
		t.Fatalf("switching the source of echo without consent = %v", results[3])
	}
	if e := readLock(t, cfg).Entry("echo"); e.Source != pkg || readLock(t, cfg).Entry("echo2") != nil {
		t.Fatalf("lock after refused installs = %+v", readLock(t, cfg).Extensions)
	}
}

// TestSessionEnableDisablePersist: /enable and /disable in a session go
// through the same manager as the CLI and persist in settings.toml.
func TestSessionEnableDisablePersist(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	src := gitRepo(t, pkg)
	if _, errOut, code := cli(t, "", "ext", "install", src, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	sp := filepath.Join(cfg, "settings.toml")
	out, errOut, code := cli(t, "/enable echo\n/call echo {\"text\":\"live\"}\n/enable ghost\n/quit\n", "session")
	if code != 0 {
		t.Fatalf("session: %d %s", code, errOut)
	}
	mustContain(t, "session", out, "enabled echo; it is live from the next turn", "live\n", "error: cannot enable ghost", "yolop ext install")
	if !strings.Contains(string(fileBytes(t, sp)), "ext:echo") {
		t.Fatal("/enable did not persist")
	}
	out, _, _ = cli(t, "/disable echo\n/quit\n", "session")
	mustContain(t, "session", out, "1 extension(s)", "disabled echo; it leaves at the next turn")
	if strings.Contains(string(fileBytes(t, sp)), "ext:echo") {
		t.Fatal("/disable did not persist")
	}
}

// TestNarrowingUpdateAppliedWithANote: removing a tool needs no consent;
// the update says what narrowed.
func TestNarrowingUpdateAppliedWithANote(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	p := filepath.Join(pkg, "plugin.json")
	var m map[string]any
	json.Unmarshal(fileBytes(t, p), &m)
	y := m["yolop"].(map[string]any)
	y["tools"] = y["tools"].([]any)[:1] // drop count
	b, _ := json.Marshal(m)
	os.WriteFile(p, b, 0o644)
	out, errOut, code := cli(t, "", "ext", "update", "echo")
	if code != 0 {
		t.Fatalf("a narrowing update without --yes failed: %s", errOut)
	}
	mustContain(t, "update", out, "note: the update narrows the grant", "- ", "count")
	if strings.Contains(out, "approved with --yes") || strings.Contains(out, "[y/N]") {
		t.Fatalf("a narrowing update asked:\n%s", out)
	}
	if tools := readLock(t, cfg).Entry("echo"); !strings.Contains(string(tools.Manifest), `"echo"`) || strings.Contains(string(tools.Manifest), `"count"`) {
		t.Fatalf("lock manifest after narrowing = %s", tools.Manifest)
	}
}
