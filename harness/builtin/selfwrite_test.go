package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness"
	"yolop.dev/harness/scaffold"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

// The self-writing loop's tools through the real wiring: a harness over a
// fresh config directory, a session from Harness.NewSession, python
// packages written by the scaffold, their servers really spawned.

// answers is an AskSink that answers from a list (cancelled once it runs
// out) and records the questions.
type answers struct {
	mu        sync.Mutex
	answers   []string
	questions []string
}

func (a *answers) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.questions = append(a.questions, p.Prompt)
	if len(a.answers) == 0 {
		return yep.UIAskResult{Cancelled: true}, nil
	}
	ans := a.answers[0]
	a.answers = a.answers[1:]
	return yep.UIAskResult{Answer: ans}, nil
}

func (a *answers) push(s ...string) {
	a.mu.Lock()
	a.answers = append(a.answers, s...)
	a.mu.Unlock()
}

func (a *answers) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.questions...)
}

type loop struct {
	t    *testing.T
	cfg  string
	ws   string
	ask  *answers
	h    *harness.Harness
	s    *harness.Session
	ctx  context.Context
	turn int
}

func newLoop(t *testing.T) *loop {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is not on PATH; .ci/run installs it")
	}
	l := &loop{t: t, cfg: t.TempDir(), ws: t.TempDir(), ask: &answers{}, ctx: context.Background()}
	h, err := harness.Open(l.ctx, harness.Options{ConfigDir: l.cfg, AllowFileGit: true})
	if err != nil {
		t.Fatal(err)
	}
	l.h = h
	l.s, _ = h.NewSession(l.ctx, harness.SessionOptions{Ask: l.ask, WorkspaceRoot: l.ws, NoEnabled: true})
	t.Cleanup(l.s.Close)
	return l
}

// call calls a tool of the session.
func (l *loop) call(tool string, args any) yep.ToolResult {
	l.t.Helper()
	b, _ := json.Marshal(args)
	l.turn++
	res, err := l.s.CallTool(l.ctx, tool, "c"+string(rune('0'+l.turn%10)), b, nil)
	if err != nil {
		l.t.Fatalf("%s %s: %v", tool, b, err)
	}
	return res
}

// mustCall calls a tool that must succeed and returns its output.
func (l *loop) mustCall(tool string, args any) string {
	l.t.Helper()
	res := l.call(tool, args)
	if res.IsError {
		l.t.Fatalf("%s: %s", tool, res.Output)
	}
	return res.Output
}

// scaffoldTool writes a python package with one tool, hello, under the
// workspace and returns its directory.
func (l *loop) scaffoldTool(name string) string {
	l.t.Helper()
	dir := filepath.Join(l.ws, name)
	if _, err := scaffold.New(scaffold.Options{Name: name, Lang: "python", Dir: dir, Tools: []string{"hello"}}); err != nil {
		l.t.Fatal(err)
	}
	return dir
}

// edit replaces old with new in the file at path, which must hold it.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not hold %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustContain(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b
}

// TestInstallWithEnableMakesToolsCallable: install_extension with enable
// true installs after the user's yes, enables the extension in
// settings.toml and activates it, so its tool answers from the next turn
// of the same session; without enable it is only installed.
func TestInstallWithEnableMakesToolsCallable(t *testing.T) {
	l := newLoop(t)
	dir := l.scaffoldTool("tk")
	l.ask.push("y")
	// A bare name that is a directory in the workspace is that directory
	// (not a crates.io name), whatever the process's directory.
	out := l.mustCall("install_extension", map[string]any{"source": "tk", "enable": true})
	mustContain(t, "install output", out, "installed tk 0.1.0 from "+dir, "enabled tk; its tools are live from the next turn")
	if strings.Contains(out, "enable it with") {
		t.Errorf("an enabled install still says how to enable it:\n%s", out)
	}
	if q := l.ask.asked(); len(q) != 1 || !strings.Contains(q[0], "hello") {
		t.Fatalf("consent questions = %q", q)
	}
	mustContain(t, "settings.toml", string(read(t, filepath.Join(l.cfg, settings.FileName))), "ext:tk")
	l.s.ApplyPending(l.ctx) // the next turn
	if got := l.mustCall("hello", map[string]string{"text": "there"}); got != "hello: there" {
		t.Fatalf("hello = %q", got)
	}

	// enable defaults to false: installed, not enabled, not live.
	dir2 := l.scaffoldTool("tk2")
	l.ask.push("y")
	out = l.mustCall("install_extension", map[string]any{"source": "./tk2"})
	mustContain(t, "install output", out, "installed tk2 0.1.0 from "+dir2, "enable it with")
	l.s.ApplyPending(l.ctx)
	if _, ok := l.s.Extension("tk2"); ok {
		t.Fatal("install without enable activated the extension")
	}
	// A declined install with enable enables nothing.
	dir3 := l.scaffoldTool("tk3")
	l.ask.push("n")
	if res := l.call("install_extension", map[string]any{"source": dir3, "enable": true}); !res.IsError || !strings.Contains(res.Output, "declined") {
		t.Fatalf("declined install = %+v", res)
	}
	if strings.Contains(string(read(t, filepath.Join(l.cfg, settings.FileName))), "tk3") {
		t.Fatal("a declined install with enable touched settings.toml")
	}
}

// TestReloadAfterACodeEdit: an edit to the server of an installed path
// source takes effect at reload_extension, not before; a manifest edit
// that widens nothing is re-pinned without asking; one that widens the
// grant is refused, pointing at update_extension, with
// the lock untouched and the running server left running; an in-place
// package just restarts.
func TestReloadAfterACodeEdit(t *testing.T) {
	l := newLoop(t)
	dir := l.scaffoldTool("tk")
	l.ask.push("y")
	l.mustCall("install_extension", map[string]any{"source": dir, "enable": true})
	l.s.ApplyPending(l.ctx)
	if got := l.mustCall("hello", map[string]string{"text": "a"}); got != "hello: a" {
		t.Fatalf("hello = %q", got)
	}
	server := filepath.Join(dir, "bin", "yolop-extension-tk")
	edit(t, server, `return "hello: " + text`, `return "hello v2: " + text`)
	if got := l.mustCall("hello", map[string]string{"text": "a"}); got != "hello: a" {
		t.Fatalf("before the reload hello = %q; the running server should still be the old one", got)
	}
	out := l.mustCall("reload_extension", map[string]string{"name": "tk"})
	mustContain(t, "reload output", out, "reloaded tk")
	if got := l.mustCall("hello", map[string]string{"text": "a"}); got != "hello v2: a" {
		t.Fatalf("after the reload hello = %q", got)
	}

	// A manifest edit that widens nothing (a new version) is re-pinned
	// without asking; the session switches to it from the next turn.
	edit(t, filepath.Join(dir, "plugin.json"), `"version": "0.1.0"`, `"version": "0.1.1"`)
	out = l.mustCall("reload_extension", map[string]string{"name": "tk"})
	mustContain(t, "re-pinning reload", out, "re-pinned tk", "0.1.0", "0.1.1", "the new version replaces the running one from the next turn")
	lock := filepath.Join(l.cfg, packaging.LockFileName)
	if lf, err := packaging.ReadLockFile(lock); err != nil || lf.Entry("tk").Version != "0.1.1" {
		t.Fatalf("lock after the re-pin = %+v, %v", lf, err)
	}
	l.s.ApplyPending(l.ctx)
	if got := l.mustCall("hello", map[string]string{"text": "a"}); got != "hello v2: a" {
		t.Fatalf("after the re-pin hello = %q", got)
	}

	before := read(t, lock)
	edit(t, filepath.Join(dir, "plugin.json"), `"tools": [`, `"tools": [
      {"name": "bye", "description": "a new tool"},`)
	res := l.call("reload_extension", map[string]string{"name": "tk"})
	if !res.IsError {
		t.Fatalf("a widening reload succeeded: %s", res.Output)
	}
	mustContain(t, "widening reload", res.Output, "update_extension tk", "bye", packaging.ErrManifestChanged.Error())
	if !bytes.Equal(before, read(t, lock)) {
		t.Fatal("a refused reload changed extensions.lock")
	}
	if got := l.mustCall("hello", map[string]string{"text": "b"}); got != "hello v2: b" {
		t.Fatalf("after a refused reload hello = %q; the server should be left running", got)
	}
	if len(l.ask.asked()) != 1 {
		t.Fatalf("reload asked the user: %q", l.ask.asked())
	}

	if res := l.call("reload_extension", map[string]string{"name": "nope"}); !res.IsError || !strings.Contains(res.Output, "nope") {
		t.Fatalf("reload of an unknown extension = %+v", res)
	}
}

// TestReloadAnInPlacePackage: a package the session loaded in place
// (--ext) is not installed; reload_extension restarts it from its
// directory.
func TestReloadAnInPlacePackage(t *testing.T) {
	ctx := context.Background()
	cfg, ws := t.TempDir(), t.TempDir()
	dir := filepath.Join(ws, "tk")
	if _, err := scaffold.New(scaffold.Options{Name: "tk", Lang: "python", Dir: dir, Tools: []string{"hello"}}); err != nil {
		t.Fatal(err)
	}
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := h.OpenSession(ctx, harness.SessionOptions{WorkspaceRoot: ws, NoEnabled: true}, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call := func(tool string, args any) yep.ToolResult {
		b, _ := json.Marshal(args)
		res, err := s.CallTool(ctx, tool, "c1", b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call("hello", map[string]string{"text": "a"}); res.Output != "hello: a" {
		t.Fatalf("hello = %+v", res)
	}
	edit(t, filepath.Join(dir, "bin", "yolop-extension-tk"), `return "hello: " + text`, `return "hi: " + text`)
	if res := call("reload_extension", map[string]string{"name": "tk"}); res.IsError || !strings.Contains(res.Output, "reloaded tk") {
		t.Fatalf("reload = %+v", res)
	}
	if res := call("hello", map[string]string{"text": "a"}); res.Output != "hi: a" {
		t.Fatalf("after the reload hello = %+v", res)
	}
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestUpdateAsksOnlyOnWidening: update_extension fetches the recorded git
// source again; a code-only change applies without a question and the
// running session picks it up; a widening change is put to the user with
// its diff, and a no or a dismissed question leaves everything as it was
// — lock, store copy, settings and the running server; a yes applies it
// and its new tool joins the session.
func TestUpdateAsksOnlyOnWidening(t *testing.T) {
	l := newLoop(t)
	dir := l.scaffoldTool("tk")
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "v1")
	l.ask.push("y")
	l.mustCall("install_extension", map[string]any{"source": "file://" + dir, "enable": true})
	l.s.ApplyPending(l.ctx)
	if got := l.mustCall("hello", map[string]string{"text": "a"}); got != "hello: a" {
		t.Fatalf("hello = %q", got)
	}
	noCooldown(t, l.cfg) // this test is about consent, not the update cooldown

	// Code only: no question, picked up from the next turn.
	server := filepath.Join(dir, "bin", "yolop-extension-tk")
	edit(t, server, `return "hello: " + text`, `return "hello v2: " + text`)
	git(t, dir, "commit", "-q", "-am", "v2")
	out := l.mustCall("update_extension", map[string]string{"name": "tk"})
	mustContain(t, "update output", out, "updated tk", "the new version replaces the running one from the next turn")
	if n := len(l.ask.asked()); n != 1 {
		t.Fatalf("a code-only update asked the user: %q", l.ask.asked())
	}
	l.s.ApplyPending(l.ctx)
	if got := l.mustCall("hello", map[string]string{"text": "a"}); got != "hello v2: a" {
		t.Fatalf("after the update hello = %q", got)
	}

	// Widening: asked; no, then a dismissed question, leave it all alone.
	edit(t, filepath.Join(dir, "plugin.json"), `"tools": [`, `"tools": [
      {"name": "bye", "description": "a new tool"},`)
	edit(t, server, `    "hello": handle_tool_hello,`, `    "hello": handle_tool_hello,
    "bye": lambda args, call: "bye!",`)
	git(t, dir, "commit", "-q", "-am", "v3")
	lock, sets := filepath.Join(l.cfg, packaging.LockFileName), filepath.Join(l.cfg, settings.FileName)
	stored := filepath.Join(l.cfg, "extensions", "tk", "bin", "yolop-extension-tk")
	lockBefore, setBefore, storeBefore := read(t, lock), read(t, sets), read(t, stored)
	if !bytes.Contains(storeBefore, []byte("hello v2")) {
		t.Fatalf("the store copy at %s is not v2", stored)
	}
	for _, answer := range []string{"n", ""} {
		if answer != "" {
			l.ask.push(answer)
		} // else: no answer left, the question is dismissed
		res := l.call("update_extension", map[string]string{"name": "tk"})
		if !res.IsError || !strings.Contains(res.Output, "not updated") {
			t.Fatalf("update answered %q = %+v", answer, res)
		}
		if !bytes.Equal(lockBefore, read(t, lock)) || !bytes.Equal(setBefore, read(t, sets)) || !bytes.Equal(storeBefore, read(t, stored)) {
			t.Fatalf("update answered %q changed the lock, settings or store", answer)
		}
		l.s.ApplyPending(l.ctx)
		if got := l.mustCall("hello", map[string]string{"text": "b"}); got != "hello v2: b" {
			t.Fatalf("after update answered %q hello = %q", answer, got)
		}
	}
	// The old version also still starts: its approval is intact.
	l.mustCall("reload_extension", map[string]string{"name": "tk"})
	if got := l.mustCall("hello", map[string]string{"text": "c"}); got != "hello v2: c" {
		t.Fatalf("after a reload hello = %q", got)
	}
	q := l.ask.asked()
	if len(q) != 3 {
		t.Fatalf("questions = %q", q)
	}
	mustContain(t, "the widening question", q[1], "Contribution diff for tk", "bye", "Widens the grant")

	l.ask.push("y")
	out = l.mustCall("update_extension", map[string]string{"name": "tk"})
	mustContain(t, "accepted update", out, "updated tk", "the new version replaces the running one from the next turn")
	l.s.ApplyPending(l.ctx)
	if got := l.mustCall("bye", map[string]any{}); got != "bye!" {
		t.Fatalf("bye = %q", got)
	}
}

// TestDoctorExtension: doctor_extension grades an installed extension by
// name and a package directory in the workspace by path, with the lines
// `yolop ext doctor` prints; a failing check makes it a tool error; a
// path outside the workspace is refused.
func TestDoctorExtension(t *testing.T) {
	l := newLoop(t)
	dir := l.scaffoldTool("tk")
	l.ask.push("y")
	l.mustCall("install_extension", map[string]any{"source": dir})
	out := l.mustCall("doctor_extension", map[string]string{"name": "tk"})
	mustContain(t, "doctor by name", out, "doctor: extension tk 0.1.0", "PASS", "tool hello", "OK: ", "0 failed")
	if strings.Contains(out, "FAIL") {
		t.Errorf("doctor of a scaffolded package reports a failure:\n%s", out)
	}
	out = l.mustCall("doctor_extension", map[string]string{"path": "tk"})
	mustContain(t, "doctor by path", out, "PASS", "tool hello", "OK: ")

	broken := l.scaffoldTool("broken")
	edit(t, filepath.Join(broken, "bin", "yolop-extension-broken"), "def main():\n", "def main():\n    sys.exit(3)\n")
	res := l.call("doctor_extension", map[string]string{"path": broken})
	if !res.IsError {
		t.Fatalf("doctor of a server that exits at once passed:\n%s", res.Output)
	}
	mustContain(t, "doctor of a broken package", res.Output, "FAIL", "broken failed", "call doctor_extension again")

	for _, args := range []map[string]string{{"path": t.TempDir()}, {"path": "../x"}, {}, {"name": "tk", "path": "tk"}, {"name": "a/b"}} {
		if res := l.call("doctor_extension", args); !res.IsError {
			t.Errorf("doctor_extension %v succeeded: %s", args, res.Output)
		}
	}
	if res := l.call("doctor_extension", map[string]string{"path": "../x"}); !strings.Contains(res.Output, "not inside the workspace") {
		t.Errorf("outside path: %s", res.Output)
	}
}

// TestSelfWritingToolPolicy: the tools that ask the user themselves carry
// no approval hint of their own (the user would be asked twice), and the
// new tools declare their risk.
func TestSelfWritingToolPolicy(t *testing.T) {
	l := newLoop(t)
	defs := map[string]host.ToolInfo{}
	for _, ti := range l.s.Tools() {
		defs[ti.Name] = ti
	}
	for name, risk := range map[string]string{"install_extension": "high", "update_extension": "high", "reload_extension": "medium", "doctor_extension": "low"} {
		d, ok := defs[name]
		if !ok {
			t.Errorf("the session has no %s", name)
			continue
		}
		if d.Def.Risk != risk {
			t.Errorf("%s risk = %q, want %q", name, d.Def.Risk, risk)
		}
		if (name == "install_extension" || name == "update_extension") && d.Def.Approval != "" {
			t.Errorf("%s approval = %q; it asks the user itself", name, d.Def.Approval)
		}
	}
	if d := defs["install_extension"]; !strings.Contains(string(d.Def.InputSchema), `"enable"`) {
		t.Errorf("install_extension schema = %s", d.Def.InputSchema)
	}
}

// noCooldown turns the update cooldown off in cfg's settings.toml, for a
// test of what an update does once it installs.
func noCooldown(t *testing.T, cfg string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(cfg, "settings.toml"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n[update]\ncooldown = \"0\"\n"); err != nil {
		t.Fatal(err)
	}
}
