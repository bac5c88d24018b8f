package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"yolop.dev/core/skill"
)

// yolopProc runs the yolop binary (built once, see yolopProcEnv), with
// its own config directory, in dir, and returns stdout, stderr and the
// exit code. A subprocess rather than cli: parallel subtests cannot each
// set YOLOP_CONFIG_DIR in-process.
func yolopProc(t *testing.T, cfg, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return yolopProcEnv(t, nil, cfg, dir, stdin, args...)
}

// yolopProcEnv is yolopProc with env added to the environment (a later
// value of a variable wins). It runs the yolop binary [built] from this
// package (the in-process tests run the same code under -race).
func yolopProcEnv(t *testing.T, env []string, cfg, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	exe, err := built("yolop.dev/cmd/yolop")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "YOLOP_CONFIG_DIR="+cfg, "NO_COLOR=1"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb syncBuf
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("yolop %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// must runs yolop and fails the test on a non-zero exit.
func must(t *testing.T, cfg, dir string, args ...string) string {
	t.Helper()
	out, errOut, code := yolopProc(t, cfg, dir, "", args...)
	if code != 0 {
		t.Fatalf("yolop %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// needTool skips without cmd, except under CI=true, where .ci/run
// installs it.
func needTool(t *testing.T, cmd string) {
	t.Helper()
	if _, err := exec.LookPath(cmd); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not on PATH; .ci/run installs it", cmd)
	}
	t.Skipf("%s is not on PATH", cmd)
}

// debianCrates is Debian's directory of packaged crate sources;
// librust-serde-json-dev (installed by .ci/run) puts serde_json there.
const debianCrates = "/usr/share/cargo/registry"

// TestExtNewInstallsAndPassesDoctor is the acceptance of `yolop ext new`:
// for every language, the commands of the README — new, install --yes,
// doctor — pass with zero edits, in a fresh config directory.
func TestExtNewInstallsAndPassesDoctor(t *testing.T) {
	for _, tc := range []struct {
		lang  string
		tools []string // what the language needs
		extra func(t *testing.T) []string
	}{
		{"python", []string{"python3"}, nil},
		{"typescript", []string{"node"}, nil},
		{"go", []string{"go"}, func(t *testing.T) []string {
			core, _ := filepath.Abs("../../core")
			return []string{"--core", core} // the temp dir is outside the checkout
		}},
		{"rust", []string{"cargo"}, func(t *testing.T) []string {
			if m, _ := filepath.Glob(filepath.Join(debianCrates, "serde_json-*")); len(m) == 0 {
				msg := "this machine cannot reach crates.io and " + debianCrates + " has no serde_json (apt-get install librust-serde-json-dev, as .ci/run does)"
				if os.Getenv("CI") == "true" {
					t.Fatal(msg)
				}
				t.Skip(msg)
			}
			return []string{"--cargo-registry", debianCrates}
		}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			t.Parallel()
			for _, c := range tc.tools {
				needTool(t, c)
			}
			args := []string{"ext", "new", "demo", "--lang", tc.lang, "--tools", "hello"}
			if tc.extra != nil {
				args = append(args, tc.extra(t)...)
			}
			cfg, work := t.TempDir(), t.TempDir()
			start := time.Now()
			out := must(t, cfg, work, args...)
			seam := "handle_tool_hello"
			if tc.lang == "go" {
				seam = "handleToolHello"
			}
			for _, want := range []string{"scaffolded extension demo (" + tc.lang + ")", seam, "yolop ext doctor demo"} {
				if !strings.Contains(out, want) {
					t.Errorf("ext new output lacks %q:\n%s", want, out)
				}
			}
			installAndDoctorHello(t, cfg, work)
			t.Logf("%s: new + install + doctor in %s", tc.lang, time.Since(start).Round(time.Millisecond))

			// A second new into the same directory is refused, leaving it.
			_, errOut, code := yolopProc(t, cfg, work, "", args...)
			if code == 0 || !strings.Contains(errOut, "already exists") {
				t.Errorf("ext new over an existing package: exit %d: %s", code, errOut)
			}
		})
	}
}

// fillIn replaces the body of a scaffolded Python handler: everything
// between its docstring and the next top-level statement.
func fillIn(t *testing.T, file, fn, body string) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i := strings.Index(s, "\ndef "+fn+"(")
	if i < 0 {
		t.Fatalf("%s has no %s", file, fn)
	}
	doc := strings.Index(s[i:], `"""`)
	end := strings.Index(s[i+doc+3:], `"""`)
	bodyStart := i + doc + 3 + end + 3 + 1 // after the closing """ and its newline
	next := strings.Index(s[bodyStart:], "\n\n")
	s = s[:bodyStart] + body + s[bodyStart+next:]
	if err := os.WriteFile(file, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestScaffoldedExtensionBlocksGitEndToEnd is the self-authoring
// acceptance (scaffolded_extension_blocks_git_end_to_end): a scaffolded
// Python pre_tool_use hook, its handler filled in to block any bash call
// running git, installed and enabled, blocks `git status` in a yolop
// session and allows `ls`. The bash tool is itself a scaffolded Python
// extension whose handler runs the command. In the same session a
// scaffolded status extension pushes to the status surface and its
// scaffolded slash command answers.
func TestScaffoldedExtensionBlocksGitEndToEnd(t *testing.T) {
	needTool(t, "python3")
	needTool(t, "sh")
	cfg, work := t.TempDir(), t.TempDir()

	must(t, cfg, work, "ext", "new", "guard", "--lang", "python", "--hooks", "pre_tool_use")
	fillIn(t, filepath.Join(work, "guard", "bin", "yolop-extension-guard"), "handle_pre_tool_use", `    command = str((args or {}).get("command", ""))
    if re.search(r"(^|[\s;&|(])git(\s|$)", command):
        return block("git is not allowed in this workspace")
    return allow()
`)
	must(t, cfg, work, "ext", "new", "shell", "--lang", "python", "--tools", "bash")
	fillIn(t, filepath.Join(work, "shell", "bin", "yolop-extension-shell"), "handle_tool_bash", `    import subprocess
    done = subprocess.run(["sh", "-c", str(args.get("command", ""))], capture_output=True, text=True)
    return done.stdout + done.stderr
`)
	// The shell's tool takes {"command": ...}: the author edits its schema.
	manifest := filepath.Join(work, "shell", "plugin.json")
	raw, _ := os.ReadFile(manifest)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	tool := m["yolop"].(map[string]any)["tools"].([]any)[0].(map[string]any)
	tool["input_schema"] = map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []string{"command"}}
	tool["example"] = map[string]any{"command": "echo hello"}
	// Its handler runs sh: the author declares that in the sandbox.
	m["yolop"].(map[string]any)["sandbox"] = map[string]any{"exec": true, "fs": []any{
		map[string]any{"path": "${workspace}", "access": "rw"}, map[string]any{"path": "${package}"}}}
	raw, _ = json.MarshalIndent(m, "", "  ")
	os.WriteFile(manifest, raw, 0o644)
	must(t, cfg, work, "ext", "new", "counter", "--lang", "python", "--status", "--commands", "greet")
	os.WriteFile(filepath.Join(work, "marker-file.txt"), nil, 0o644)

	for _, ext := range []string{"guard", "shell", "counter"} {
		must(t, cfg, work, "ext", "install", "./"+ext, "--yes")
		must(t, cfg, work, "ext", "doctor", "--timeout", slowMachine, ext)
		must(t, cfg, work, "ext", "enable", ext)
	}

	script := strings.Join([]string{
		`/call bash {"command":"git status"}`,
		`/call bash {"command":"ls ` + work + `"}`,
		`/call bash {"command":"echo ok && git log"}`,
		"/counter:greet a b",
		"/quit",
	}, "\n") + "\n"
	out, errOut, code := yolopProc(t, cfg, work, script, "session", "--json")
	if code != 0 {
		t.Fatalf("session: exit %d\n%s\n%s", code, out, errOut)
	}
	evs := events(t, out)
	var results, statuses []map[string]any
	for _, e := range evs {
		switch e["event"] {
		case "status.changed":
			d, _ := e["data"].(map[string]any)
			statuses = append(statuses, d)
		case "result", "error", "command_result":
			results = append(results, e)
		}
	}
	if len(results) != 4 {
		t.Fatalf("want 4 results, got %d:\n%s\n%s", len(results), out, errOut)
	}
	text := func(e map[string]any) string { b, _ := json.Marshal(e); return string(b) }
	if s := text(results[0]); !strings.Contains(s, "git is not allowed in this workspace") || strings.Contains(s, "On branch") {
		t.Errorf("git status was not blocked: %s", s)
	}
	if s := text(results[1]); !strings.Contains(s, "marker-file.txt") {
		t.Errorf("ls was not allowed: %s", s)
	}
	if s := text(results[2]); !strings.Contains(s, "git is not allowed") {
		t.Errorf("git after && was not blocked: %s", s)
	}
	if s := text(results[3]); !strings.Contains(s, "greet ran with arguments 'a b'") {
		t.Errorf("the slash command: %s", s)
	}
	found := false
	for _, s := range statuses {
		found = found || (s["extension"] == "counter" && s["text"] == "ready")
	}
	if !found {
		t.Errorf("the status extension pushed nothing to the status surface: %v\n%s", statuses, out)
	}
}

// TestScaffoldedSkillsAreVisibleAndReadOnly
// (extension_contributed_skill_is_visible_and_read_only): the skill a
// scaffolded package ships is listed by /skills and in --json, read by
// /skills <name> and the agent's read_skill, from enabled extensions
// only; a name that is a path is refused, and nothing writes the file.
func TestScaffoldedSkillsAreVisibleAndReadOnly(t *testing.T) {
	needTool(t, "python3")
	cfg, work := t.TempDir(), t.TempDir()
	for _, ext := range []string{"helper", "dormant"} {
		must(t, cfg, work, "ext", "new", ext, "--lang", "python", "--tools", "hello", "--skills")
		out := must(t, cfg, work, "ext", "install", "./"+ext, "--yes")
		if !strings.Contains(out, "Skills (1, read-only") {
			t.Errorf("the consent summary does not list the skill:\n%s", out)
		}
	}
	must(t, cfg, work, "ext", "enable", "helper") // dormant stays disabled
	skillFile := filepath.Join(work, "helper", "skills", "helper", "SKILL.md")
	before, err := os.ReadFile(skillFile)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(skillFile)

	script := strings.Join([]string{
		"/skills",
		"/skills helper",
		`/call list_skills {}`,
		`/call read_skill {"name":"helper"}`,
		`/call read_skill {"name":"dormant"}`,
		`/call read_skill {"name":"../helper/SKILL.md"}`,
		"/skills helper:helper",
		"/disable helper",
		`/call hello {"text":"next turn"}`,
		"/skills",
		"/quit",
	}, "\n") + "\n"
	out, errOut, code := yolopProc(t, cfg, work, script, "session", "--json")
	if code != 0 {
		t.Fatalf("session: exit %d\n%s\n%s", code, out, errOut)
	}
	var got []map[string]any
	for _, e := range events(t, out) {
		switch e["event"] {
		case "skills", "skill", "result", "error":
			got = append(got, e)
		}
	}
	js := func(i int) string {
		if i >= len(got) {
			return ""
		}
		b, _ := json.Marshal(got[i])
		return string(b)
	}
	for i, want := range []string{
		`"skills":[{"description":"How to use the helper extension's tools and commands; read this before calling them.","extension":"helper","name":"helper"}]`,
		`"text":"---\nname: helper\n`,
		`"event":"result"`, // list_skills
		"# Using the helper extension",
		`no skill \"dormant\" in this session`,
		`is not a skill name`,
		`"extension":"helper"`,
		`no tool \"hello\" in this session`, // the turn that applies the disable
		`"skills":[]`,
	} {
		if !strings.Contains(js(i), want) {
			t.Errorf("event %d: want %q in %s\nall:\n%s", i, want, js(i), out)
		}
	}
	if !strings.Contains(js(2), "helper (helper)") || strings.Contains(js(2), "dormant") {
		t.Errorf("list_skills: %s", js(2))
	}
	after, _ := os.ReadFile(skillFile)
	fi2, _ := os.Stat(skillFile)
	if string(after) != string(before) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("the session wrote the contributed SKILL.md")
	}
}

// TestAuthorExtensionSkill: the repository's author-extension skill is a
// valid SKILL.md, and every `yolop ext` flag it names exists, so the skill
// cannot drift from the command it drives.
func TestAuthorExtensionSkill(t *testing.T) {
	dir := "../../.agents/skills/author-extension"
	m, err := skill.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "author-extension" {
		t.Errorf("name = %q", m.Name)
	}
	text, _ := os.ReadFile(filepath.Join(dir, skill.FileName))
	a := &app{}
	cmds := map[string]*cobra.Command{"new": a.extNewCmd(), "install": a.extInstallCmd(), "doctor": a.extDoctorCmd(), "enable": a.extEnableCmd(), "update": a.extUpdateCmd()}
	flagRE := regexp.MustCompile(`--([a-z][a-z-]+)`)
	joined := strings.ReplaceAll(string(text), "\\\n", " ") // shell line continuations
	for _, line := range strings.Split(joined, "\n") {
		_, rest, ok := strings.Cut(line, "yolop ext ")
		if !ok {
			continue
		}
		verb := strings.Fields(rest)[0]
		c, known := cmds[verb]
		if !known {
			t.Errorf("the skill runs yolop ext %s, which the test does not know: %s", verb, line)
			continue
		}
		for _, f := range flagRE.FindAllStringSubmatch(rest, -1) {
			if c.Flags().Lookup(f[1]) == nil {
				t.Errorf("yolop ext %s has no --%s (skill line: %s)", verb, f[1], line)
			}
		}
	}
	for _, want := range []string{"yolop ext new", "yolop ext install", "yolop ext doctor", "yolop ext enable", "scaffold_extension", "install_extension"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the skill does not mention %s", want)
		}
	}
}
