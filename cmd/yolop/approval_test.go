package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"yolop.dev/core/host"
	"yolop.dev/harness"
	"yolop.dev/transport/stdio"
)

// editManifest rewrites the package's plugin.json through fn.
func editManifest(t *testing.T, pkg string, fn func(y map[string]any)) {
	t.Helper()
	p := filepath.Join(pkg, "plugin.json")
	var m map[string]any
	if err := json.Unmarshal(fileBytes(t, p), &m); err != nil {
		t.Fatal(err)
	}
	fn(m["yolop"].(map[string]any))
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// swapServer points the manifest at another program (which leaves a
// marker when it runs, then serves echo) and declares one more tool: a
// widening of both the command and the tool list.
func swapServer(t *testing.T, pkg string) (marker string) {
	t.Helper()
	marker = filepath.Join(t.TempDir(), "ran")
	exe, _ := os.Executable()
	script := fmt.Sprintf("#!/bin/sh\ntouch '%s'\nexec '%s' serve-echo \"$@\"\n", marker, exe)
	if err := os.WriteFile(filepath.Join(pkg, "bin", "other-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	editManifest(t, pkg, func(y map[string]any) {
		y["capabilityServer"] = map[string]any{"command": "other-server"}
		y["sandbox"] = wrapperSandbox(t, filepath.Dir(marker))
		y["tools"] = append(y["tools"].([]any), map[string]any{"name": "shout", "description": "Shout the text."})
	})
	return marker
}

// A path source's code may change freely, its manifest may not widen:
// at session start a widened manifest keeps the extension off with the
// contribution diff and the command that approves it, the new program
// never runs, `ext list` says so, and `ext update` approves it.
func TestWidenedPathManifestNeedsApprovalAtSessionStart(t *testing.T) {
	isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code != 0 {
		t.Fatal(errOut)
	}
	marker := swapServer(t, pkg)

	out, errOut, code := cli(t, "/tools\n/quit\n", "session")
	if code != 0 {
		t.Fatalf("session: %d %s", code, errOut)
	}
	mustContain(t, "session", out, "warning: skipping enabled extension echo", "manifest changed — needs approval",
		"new tool shout", "server command changed", "other-server", "yolop ext update echo", "0 extension(s)")
	if strings.Contains(out, "shout  ") || strings.Contains(out, "\n  shout") {
		t.Errorf("the unapproved tool is listed:\n%s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the unapproved server command ran")
	}

	list, _, _ := cli(t, "", "ext", "list")
	mustContain(t, "list", list, "echo 0.1.0  enabled  manifest changed — needs approval", "new tool shout")
	var infos []struct {
		Name, Health string
	}
	js, _, _ := cli(t, "", "ext", "list", "--json")
	if err := json.Unmarshal([]byte(js), &infos); err != nil || len(infos) != 1 || infos[0].Health != "manifest changed — needs approval" {
		t.Fatalf("list --json = %s (%v)", js, err)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code == 0 || !strings.Contains(errOut, "yolop ext update echo") {
		t.Fatalf("enable of a widened path source: %d %s", code, errOut)
	}

	// Approving the change lets it run, new tool and all.
	if _, errOut, code := cli(t, "", "ext", "update", "echo", "--yes"); code != 0 {
		t.Fatalf("update --yes: %s", errOut)
	}
	out, errOut, code = cli(t, "/tools\n/quit\n", "session")
	if code != 0 {
		t.Fatalf("session after approval: %d %s", code, errOut)
	}
	mustContain(t, "session after approval", out, "1 extension(s)")
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the approved server command did not run")
	}
}

// A narrower live manifest runs — under the approved grant, not the
// live one.
func TestNarrowedPathManifestRunsUnderTheApprovedGrant(t *testing.T) {
	isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code != 0 {
		t.Fatal(errOut)
	}
	editManifest(t, pkg, func(y map[string]any) {
		y["tools"] = y["tools"].([]any)[:1] // drop count
	})
	out, errOut, code := cli(t, "/tools\n/prompt\n"+`/call echo {"text":"still here"}`+"\n/quit\n", "session")
	if code != 0 {
		t.Fatalf("session: %d %s", code, errOut)
	}
	mustContain(t, "session", out, "1 extension(s)", "still here", "count", "The echo extension is installed")
	if strings.Contains(out, "warning: skipping") {
		t.Fatalf("a narrowed manifest was refused:\n%s", out)
	}
}

// The approval is checked again at every spawn, not only at session
// start: a manifest widened while the session runs keeps /reload from
// starting the new program, with the diff in the reason.
func TestWidenedPathManifestRefusedAtRespawn(t *testing.T) {
	isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code != 0 {
		t.Fatal(errOut)
	}
	s := startSession(t)
	s.waitFor("1 extension(s)")
	s.send(`/call echo {"text":"before"}`)
	s.waitFor("before")

	marker := swapServer(t, pkg)
	s.send("/reload echo")
	s.send("/status")
	out := s.quit()
	mustContain(t, "session", out, "manifest changed — needs approval", "new tool shout", "yolop ext update echo", "degraded")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the widened server command ran at reload")
	}
}

// sessionPipe runs `yolop session` in-process over a pipe, so a test can
// change files between lines.
type sessionPipe struct {
	t         *testing.T
	in        *io.PipeWriter
	out, errb syncBuf
	done      chan int
}

func startSession(t *testing.T, args ...string) *sessionPipe {
	t.Helper()
	inR, inW := io.Pipe()
	s := &sessionPipe{t: t, in: inW, done: make(chan int, 1)}
	go func() {
		s.done <- run(context.Background(), append([]string{"session"}, args...), inR, &s.out, &s.errb)
	}()
	return s
}

func (s *sessionPipe) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// waitFor polls the output for want. The deadline is generous: it only
// ends a hung test, it measures nothing.
func (s *sessionPipe) waitFor(want string) {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(s.out.String(), want) {
		if time.Now().After(deadline) {
			s.t.Fatalf("no %q in:\n%s\nstderr:\n%s", want, s.out.String(), s.errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *sessionPipe) quit() string {
	s.t.Helper()
	s.send("/quit")
	s.in.Close()
	if code := <-s.done; code != 0 {
		s.t.Fatalf("session exit %d: %s", code, s.errb.String())
	}
	return s.out.String()
}

// The store copy is verified against its pinned digests before every
// spawn: a server binary replaced after the session started is never run
// — not at /reload, not at a crash respawn — and putting the approved
// bytes back lets /reload start it again.
func TestTamperedBinaryRefusedAtEverySpawn(t *testing.T) {
	cfg := isolate(t)
	src := gitRepo(t, echoPackage(t))
	if _, errOut, code := cli(t, "", "ext", "install", src, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code != 0 {
		t.Fatal(errOut)
	}
	srv := filepath.Join(cfg, "extensions", "echo", "bin", "yolop-extension-echo")
	approved := fileBytes(t, srv)
	marker := filepath.Join(t.TempDir(), "pwned")
	exe, _ := os.Executable()
	evil := fmt.Sprintf("#!/bin/sh\ntouch '%s'\nexec '%s' serve-echo \"$@\"\n", marker, exe)

	s := startSession(t)
	s.waitFor("1 extension(s)")
	s.send(`/call echo {"text":"first"}`)
	s.waitFor("first")
	if err := os.WriteFile(srv, []byte(evil), 0o755); err != nil {
		t.Fatal(err)
	}
	s.send("/reload echo")
	s.waitFor("changed: bin/yolop-extension-echo")
	s.send(`/call echo {"text":"second"}`)
	s.waitFor("not started")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the tampered server binary ran")
	}
	if err := os.WriteFile(srv, approved, 0o755); err != nil {
		t.Fatal(err)
	}
	s.send("/reload echo")
	s.send(`/call echo {"text":"restored"}`)
	s.waitFor("restored")
	out := s.quit()
	mustContain(t, "session", out, "installed package does not match its approved content hash", "yolop ext update echo")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the tampered server binary ran")
	}
}

// BenchmarkSpawnVerified measures what the per-spawn check of an installed
// package costs: start → handshake → stop of the installed echo extension
// with its Verify hook, alternated in the same run with the same grant
// without it. The ratio is the figure; each path's µs are reported too.
func BenchmarkSpawnVerified(b *testing.B) {
	b.Setenv("YOLOP_CONFIG_DIR", b.TempDir())
	b.Setenv(allowFileGitEnv, "1")
	pkg := b.TempDir()
	manifest, _ := os.ReadFile("demo/plugin.json")
	os.WriteFile(filepath.Join(pkg, "plugin.json"), withWrapperSandbox(b, manifest), 0o644)
	exe, _ := os.Executable()
	os.Mkdir(filepath.Join(pkg, "bin"), 0o755)
	os.WriteFile(filepath.Join(pkg, "bin", "yolop-extension-echo"), []byte("#!/bin/sh\nexec '"+exe+"' serve-echo \"$@\"\n"), 0o755)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = pkg
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	var out, errb syncBuf
	ctx := context.Background()
	if code := run(ctx, []string{"ext", "install", "file://" + pkg, "--yes"}, strings.NewReader(""), &out, &errb); code != 0 {
		b.Fatal(errb.String())
	}
	if code := run(ctx, []string{"ext", "enable", "echo"}, strings.NewReader(""), &out, &errb); code != 0 {
		b.Fatal(errb.String())
	}
	h, err := harness.Open(ctx, harness.Options{})
	if err != nil {
		b.Fatal(err)
	}
	grants, warns, _ := h.Manager().Grants(ctx)
	if len(grants) != 1 || grants[0].Verify == nil {
		b.Fatalf("grants = %+v, %v", grants, warns)
	}
	verified := grants[0]
	bare := verified
	bare.Verify = nil
	tr := stdio.New(stdio.Options{})
	spawn := func(g host.Grant) time.Duration {
		t0 := time.Now()
		e := host.NewExtension(g, host.ExtensionOptions{Transport: tr})
		if err := e.Start(ctx); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		e.Close()
		return d
	}
	var with, without time.Duration
	for b.Loop() {
		with += spawn(verified)
		without += spawn(bare)
	}
	n := float64(b.N)
	b.ReportMetric(float64(with.Microseconds())/n, "verified-µs/spawn")
	b.ReportMetric(float64(without.Microseconds())/n, "bare-µs/spawn")
	b.ReportMetric(float64(with)/float64(without), "verified/bare")
}

// [session] tool_timeout bounds a call; its expiry is reported as a
// timeout naming the tool and the limit, not as a cancel, and the
// session goes on.
func TestSessionToolTimeoutFromSettings(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := cli(t, "", "ext", "enable", "echo"); code != 0 {
		t.Fatal(errOut)
	}
	st := filepath.Join(cfg, "settings.toml")
	f, err := os.OpenFile(st, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "\n[session]\ntool_timeout = \"1s\"")
	f.Close()
	script := `/call count {"n":100000,"delay_ms":50}` + "\n" + `/call echo {"text":"after"}` + "\n/quit\n"
	out, errOut, code := cli(t, script, "session", "--json")
	if code != 0 {
		t.Fatalf("session: %d %s", code, errOut)
	}
	var timeout map[string]any
	var after bool
	for _, ev := range events(t, out) {
		switch ev["event"] {
		case "timeout":
			timeout = ev
		case "cancelled":
			t.Errorf("the timeout was reported as a cancel: %v", ev)
		case "result":
			after = after || ev["output"] == "after"
		}
	}
	if timeout == nil || timeout["tool"] != "count" || !strings.Contains(timeout["message"].(string), `tool "count" timed out after 1s`) {
		t.Fatalf("timeout event = %v\n%s", timeout, out)
	}
	if !after {
		t.Fatalf("the session did not go on after the timeout:\n%s", out)
	}

	// A malformed value is a warning; the session still runs.
	b := strings.Replace(string(fileBytes(t, st)), `tool_timeout = "1s"`, `tool_timeout = "soon"`, 1)
	os.WriteFile(st, []byte(b), 0o644)
	out, _, code = cli(t, `/call echo {"text":"still"}`+"\n/quit\n", "session")
	if code != 0 {
		t.Fatal("a malformed tool_timeout stopped the session")
	}
	mustContain(t, "session", out, "session.tool_timeout", "settings.toml", "still")
}

// A package that needs a newer yolop is refused at install, naming both
// versions, and nothing is written.
func TestInstallRefusesANewerEngine(t *testing.T) {
	cfg := isolate(t)
	pkg := echoPackage(t)
	p := filepath.Join(pkg, "plugin.json")
	var m map[string]any
	json.Unmarshal(fileBytes(t, p), &m)
	m["engines"] = map[string]any{"yolop": ">=9.0"}
	b, _ := json.Marshal(m)
	os.WriteFile(p, b, 0o644)
	_, errOut, code := cli(t, "", "ext", "install", pkg, "--yes")
	if code == 0 {
		t.Fatal("installed a package that needs yolop >=9.0")
	}
	mustContain(t, "install", errOut, "needs yolop >=9.0, this is "+version)
	if _, err := os.Stat(filepath.Join(cfg, "extensions.lock")); err == nil {
		t.Fatal("a refused install wrote extensions.lock")
	}
}
