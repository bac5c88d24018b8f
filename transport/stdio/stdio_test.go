//go:build linux

package stdio_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/transport/stdio"
)

func TestEnvScrubbed(t *testing.T) {
	const canary = "canary-3f9c1e7d-do-not-leak"
	t.Setenv("FOO_API_KEY", canary)
	t.Setenv("GITHUB_TOKEN", canary)
	t.Setenv("AWS_SECRET_ACCESS_KEY", canary)
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("LC_PASSWORD_HINT", canary) // matches LC_* but looks like a credential
	t.Setenv("YOLOP_NOT_ALLOWED", "x")
	t.Setenv("LC_TIME", "C.UTF-8")
	t.Setenv("HOME", "/home/someone")

	tr := stdio.New(stdio.Options{})
	inst := start(t, tr, fakeSpec(t, "envext", "printenv", map[string]string{
		"MY_SETTING":  "42",
		"EXT_API_KEY": "declared-by-manifest",
	}))
	out, err := io.ReadAll(inst.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	if strings.Contains(string(out), canary) {
		t.Errorf("a host secret reached the server's environment:\n%s", out)
	}
	for _, name := range []string{"FOO_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "LC_PASSWORD_HINT", "YOLOP_NOT_ALLOWED"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s passed to the server", name)
		}
	}
	want := map[string]string{
		"HOME": "/home/someone", "LC_TIME": "C.UTF-8", "PATH": os.Getenv("PATH"),
		"MY_SETTING": "42", "EXT_API_KEY": "declared-by-manifest", fakeEnv: "printenv", "GORACE": "atexit_sleep_ms=0",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("server env %s = %q, want %q", k, got[k], v)
		}
	}
	allow := stdio.DefaultEnvAllowlist()
	for k := range got {
		if _, ok := want[k]; ok {
			continue
		}
		ok := false
		for _, a := range allow {
			if p, star := strings.CutSuffix(a, "*"); (star && strings.HasPrefix(k, p)) || a == k {
				ok = true
			}
		}
		if !ok {
			t.Errorf("server env has %s, which is neither allowlisted nor declared", k)
		}
	}
}

func TestEnvEmptyAllowlistAndInvalidEnv(t *testing.T) {
	tr := stdio.New(stdio.Options{BaseEnvAllowlist: []string{}})
	inst := start(t, tr, fakeSpec(t, "bare", "printenv", nil))
	out, _ := io.ReadAll(inst.Stdout())
	inst.Stop(10 * time.Second)
	if got, want := strings.TrimSpace(string(out)), "GORACE=atexit_sleep_ms=0\n"+fakeEnv+"=printenv"; got != want {
		t.Errorf("with an empty allowlist the env is %q, want %q", got, want)
	}

	_, err := tr.Start(context.Background(), fakeSpec(t, "bad", "printenv", map[string]string{"A=B": "x"}))
	if !errors.Is(err, stdio.ErrInvalidEnv) || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("Start with env name A=B: got %v, want ErrInvalidEnv naming the extension", err)
	}
}

func writeScript(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), mode); err != nil {
		t.Fatal(err)
	}
}

func runOutput(t *testing.T, tr *stdio.Transport, spec core.ServerSpec) string {
	t.Helper()
	inst := start(t, tr, spec)
	out, err := io.ReadAll(inst.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestCommandResolution(t *testing.T) {
	pkg := t.TempDir()
	pathDir := t.TempDir()
	writeScript(t, filepath.Join(pkg, "bin", "fakesrv"), "echo from-bin; pwd", 0o755)
	writeScript(t, filepath.Join(pathDir, "fakesrv"), "echo from-path", 0o755)
	writeScript(t, filepath.Join(pkg, "tools", "rel"), "echo from-relative", 0o755)
	tr := stdio.New(stdio.Options{Environ: func() []string { return []string{"PATH=" + pathDir + ":relative/dir"} }})
	spec := core.ServerSpec{Name: "resolver", Command: "fakesrv", PackageDir: pkg}

	if got, want := runOutput(t, tr, spec), "from-bin\n"+pkg; got != want {
		t.Errorf("bin/ first: output %q, want %q (and working dir = PackageDir)", got, want)
	}

	sub := t.TempDir()
	spec.Dir = sub
	if got := runOutput(t, tr, spec); !strings.HasSuffix(got, sub) {
		t.Errorf("working dir with Dir set: output %q, want it to end in %s", got, sub)
	}
	spec.Dir = ""

	if got := runOutput(t, tr, core.ServerSpec{Name: "resolver", Command: "tools/rel", PackageDir: pkg}); got != "from-relative" {
		t.Errorf("relative path inside the package: output %q", got)
	}

	if err := os.Chmod(filepath.Join(pkg, "bin", "fakesrv"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := tr.Start(context.Background(), spec)
	if !errors.Is(err, stdio.ErrNotExecutable) || !strings.Contains(err.Error(), "chmod +x") {
		t.Errorf("non-executable bin/ entry: got %v, want ErrNotExecutable with a chmod hint", err)
	}

	if err := os.Remove(filepath.Join(pkg, "bin", "fakesrv")); err != nil {
		t.Fatal(err)
	}
	if got := runOutput(t, tr, spec); got != "from-path" {
		t.Errorf("PATH fallback: output %q, want from-path", got)
	}
}

func TestCommandOutsidePackage(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "pkg")
	writeScript(t, filepath.Join(root, "evil"), "echo escaped", 0o755)
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := stdio.New(stdio.Options{})
	for _, cmd := range []string{"../evil", "bin/../../evil", "./../evil"} {
		_, err := tr.Start(context.Background(), core.ServerSpec{Name: "escaper", Command: cmd, PackageDir: pkg})
		if !errors.Is(err, stdio.ErrCommandOutsidePackage) {
			t.Errorf("command %q: got %v, want ErrCommandOutsidePackage", cmd, err)
		}
	}
}

func TestMissingCommand(t *testing.T) {
	pkg := t.TempDir()
	tr := stdio.New(stdio.Options{Environ: func() []string { return []string{"PATH=/nonexistent-a:/nonexistent-b"} }})
	_, err := tr.Start(context.Background(), core.ServerSpec{Name: "ghost", Command: "ghost-server", PackageDir: pkg})
	if !errors.Is(err, stdio.ErrCommandNotFound) {
		t.Fatalf("got %v, want ErrCommandNotFound", err)
	}
	msg := err.Error()
	for _, want := range []string{`extension "ghost"`, `"ghost-server"`, filepath.Join(pkg, "bin"), "/nonexistent-a:/nonexistent-b", "bin/ directory", "plugin.json"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}

	_, err = tr.Start(context.Background(), core.ServerSpec{Name: "ghost"})
	if !errors.Is(err, stdio.ErrNoCommand) {
		t.Errorf("empty command: got %v, want ErrNoCommand", err)
	}
}

func TestStartCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := stdio.New(stdio.Options{}).Start(ctx, fakeSpec(t, "late", "echo", nil))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestStderrLoggedAndTail(t *testing.T) {
	logger, buf := captureLogger()
	tr := stdio.New(stdio.Options{Logger: logger})
	inst := start(t, tr, fakeSpec(t, "chatty", "stderr", nil))
	if err := inst.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if got, want := strings.Join(inst.StderrTail(), "|"), "hello from stderr|second line"; got != want {
		t.Errorf("StderrTail = %q, want %q", got, want)
	}
	log := buf.String()
	for _, want := range []string{"[INFO]  host.chatty: hello from stderr", "[INFO]  host.chatty: second line"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestStderrFloodCappedRateLimitedRedacted(t *testing.T) {
	logger, buf := captureLogger()
	tr := stdio.New(stdio.Options{
		Logger:          logger,
		StderrLines:     4,
		StderrLineBytes: 100,
		StderrRate:      1,
		StderrBurst:     5,
	})
	const secret = "s3cr3t-declared-token"
	inst := start(t, tr, fakeSpec(t, "flood", "flood", map[string]string{"FOO_TOKEN": secret}))
	<-inst.Done()
	if err := inst.Err(); err != nil {
		t.Fatalf("Err = %v, want nil", err)
	}
	inst.Kill()

	tail := inst.StderrTail()
	if len(tail) != 4 {
		t.Fatalf("tail has %d lines, want 4: %q", len(tail), tail)
	}
	if !strings.HasPrefix(tail[0], "long xxx") || !strings.HasSuffix(tail[0], "…[1048481 more bytes]") || len(tail[0]) > 100+len(" …[1048481 more bytes]") {
		t.Errorf("long line not capped: %.120q… (%d bytes)", tail[0], len(tail[0]))
	}
	if tail[1] != "Authorization: [REDACTED]" {
		t.Errorf("header line = %q, want it redacted", tail[1])
	}
	if tail[2] != "\uFFFD[31mred\uFFFD[0m" {
		t.Errorf("control characters not neutralised: %q", tail[2])
	}
	if tail[3] != "last: token=[REDACTED]" {
		t.Errorf("last line = %q, want the declared secret redacted", tail[3])
	}

	log := buf.String()
	if strings.Contains(log, secret) || strings.Contains(strings.Join(tail, "\n"), secret) {
		t.Errorf("the declared secret reached the log or tail")
	}
	if !strings.Contains(log, "first: token=[REDACTED]") {
		t.Errorf("first line not logged redacted:\n%.2000s", log)
	}
	logged := strings.Count(log, "host.flood: flood ")
	if logged >= 100 {
		t.Errorf("%d of 2000 flood lines were logged; the rate limit (burst 5, 1/s) did not hold", logged)
	}
	if !strings.Contains(log, "dropped by the rate limit") {
		t.Errorf("no note of dropped lines in the log")
	}
}

func TestStopCooperative(t *testing.T) {
	tr := stdio.New(stdio.Options{})
	inst := start(t, tr, fakeSpec(t, "echo", "echo", nil))
	if _, err := io.WriteString(inst.Stdin(), "ping\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(inst.Stdout()).ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Fatalf("echo: %q, %v", line, err)
	}
	if err := inst.Stop(10 * time.Second); err != nil {
		t.Errorf("Stop of a cooperative server = %v, want nil", err)
	}
	select {
	case <-inst.Done():
	default:
		t.Error("Done not closed after Stop")
	}
	if inst.Err() != nil {
		t.Errorf("Err = %v", inst.Err())
	}
	if n, err := inst.Stdout().Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("Stdout read after Stop = %d, %v; want 0, io.EOF", n, err)
	}
	if !procGone(inst.PID()) {
		t.Errorf("pid %d still in the process table", inst.PID())
	}
	// Stop and Kill are idempotent.
	if err := inst.Stop(0); err != nil {
		t.Errorf("second Stop = %v", err)
	}
	if err := inst.Kill(); err != nil {
		t.Errorf("Kill after Stop = %v", err)
	}
}

func TestStopStubbornIsKilled(t *testing.T) {
	logger, buf := captureLogger()
	tr := stdio.New(stdio.Options{Logger: logger, TermGrace: 50 * time.Millisecond})
	inst := start(t, tr, fakeSpec(t, "stubborn", "stubborn", nil))
	line, err := bufio.NewReader(inst.Stdout()).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("waiting for ready: %q, %v", line, err)
	}
	err = inst.Stop(50 * time.Millisecond)
	var ee *core.ExitError
	if !errors.As(err, &ee) || ee.Signal != "SIGKILL" || ee.Code != -1 || ee.Name != "stubborn" {
		t.Fatalf("Stop = %#v, want an ExitError for SIGKILL", err)
	}
	if !procGone(inst.PID()) {
		t.Errorf("pid %d still in the process table", inst.PID())
	}
	if log := buf.String(); !strings.Contains(log, "ignored SIGTERM; sending SIGKILL") {
		t.Errorf("no SIGKILL escalation in the log:\n%s", log)
	}
}

func TestGrandchildHoldingPipes(t *testing.T) {
	tr := stdio.New(stdio.Options{})
	inst := start(t, tr, fakeSpec(t, "forker", "forker", nil))
	r := bufio.NewReader(inst.Stdout())
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	gpid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "grandchild "))
	if err != nil {
		t.Fatalf("bad line %q", line)
	}
	if procGone(gpid) {
		t.Fatalf("grandchild %d not running before the stop", gpid)
	}
	// The server exits when its stdin closes; the grandchild still holds
	// stdout, so EOF can only come from killing the group.
	inst.Stdin().Close()
	within(t, "reading stdout to EOF after the server exited", func() {
		if _, err := io.ReadAll(r); err != nil {
			t.Errorf("ReadAll: %v", err)
		}
	})
	if err := inst.Stop(10 * time.Second); err != nil {
		t.Errorf("Stop = %v", err)
	}
	waitGone(t, inst.PID(), "server")
	waitGone(t, gpid, "grandchild")
}

func TestStopKillsGroupWhileRunning(t *testing.T) {
	tr := stdio.New(stdio.Options{TermGrace: 50 * time.Millisecond})
	spec := fakeSpec(t, "forker", "forker", nil)
	inst := start(t, tr, spec)
	line, err := bufio.NewReader(inst.Stdout()).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	gpid, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "grandchild "))
	var ee *core.ExitError
	if err := inst.Kill(); !errors.As(err, &ee) || ee.Signal != "SIGKILL" {
		t.Errorf("Kill = %v, want ExitError with SIGKILL", err)
	}
	waitGone(t, inst.PID(), "server")
	waitGone(t, gpid, "grandchild")
}

func TestCrashReported(t *testing.T) {
	tr := stdio.New(stdio.Options{})
	t.Run("exit code", func(t *testing.T) {
		inst := start(t, tr, fakeSpec(t, "crasher", "crash", nil))
		<-inst.Done()
		var ee *core.ExitError
		if !errors.As(inst.Err(), &ee) {
			t.Fatalf("Err = %v, want *core.ExitError", inst.Err())
		}
		if ee.Code != 3 || ee.Signal != "" || ee.Name != "crasher" {
			t.Errorf("ExitError = %+v, want code 3, no signal", ee)
		}
		if got := strings.Join(ee.Stderr, "|"); got != "boom line 1|boom line 2|boom line 3" {
			t.Errorf("ExitError.Stderr = %q", got)
		}
		if msg := ee.Error(); !strings.Contains(msg, `extension "crasher" exited (exit status 3)`) || !strings.Contains(msg, "boom line 3") {
			t.Errorf("message %q", msg)
		}
		if err := inst.Stop(time.Second); err != inst.Err() {
			t.Errorf("Stop after exit = %v, want Err()", err)
		}
	})
	t.Run("signal", func(t *testing.T) {
		inst := start(t, tr, fakeSpec(t, "suicidal", "selfkill", nil))
		if expectPIDNS(t) {
			// The init of a PID namespace cannot kill itself with a
			// signal (a documented limit): the host's SIGKILL ends it.
			line, err := bufio.NewReader(inst.Stdout()).ReadString('\n')
			if err != nil || line != "survived\n" {
				t.Fatalf("a namespace init's own SIGKILL: read %q, %v; want it to survive", line, err)
			}
			inst.Kill()
		}
		<-inst.Done()
		var ee *core.ExitError
		if !errors.As(inst.Err(), &ee) || ee.Signal != "SIGKILL" || ee.Code != -1 {
			t.Fatalf("Err = %v, want ExitError with SIGKILL", inst.Err())
		}
		if len(ee.Stderr) != 1 || ee.Stderr[0] != "about to die" {
			t.Errorf("ExitError.Stderr = %q", ee.Stderr)
		}
		inst.Kill()
	})
}

func TestHostKilledServerDies(t *testing.T) {
	host := exec.Command(testBinary(t))
	host.Env = append(os.Environ(), fakeEnv+"=host")
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer host.Wait()
	defer host.Process.Kill()
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading from the host: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "server "))
	if err != nil {
		t.Fatalf("bad line %q", line)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "churned\n" {
		t.Fatalf("host: %q, %v", line, err)
	}
	if procGone(pid) {
		t.Fatalf("server %d died while the host churned threads (parent-death signal tied to a dead thread)", pid)
	}
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, "server of the killed host")
}

// startDropped starts a server and drops every reference to its instance.
func startDropped(t *testing.T, tr *stdio.Transport) int {
	inst, err := tr.Start(context.Background(), fakeSpec(t, "dropped", "sleeper", nil))
	if err != nil {
		t.Fatal(err)
	}
	return inst.PID()
}

func TestDroppedInstanceIsKilled(t *testing.T) {
	logger, buf := captureLogger()
	tr := stdio.New(stdio.Options{Logger: logger})
	pid := startDropped(t, tr)
	deadline := time.Now().Add(hangGuard)
	for !procGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("dropped instance's server %d still running", pid)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(buf.String(), "dropped without Stop or Kill") {
		t.Errorf("no warning logged for the dropped instance:\n%s", buf.String())
	}
}

func TestZeroTransport(t *testing.T) {
	var tr stdio.Transport
	inst, err := tr.Start(context.Background(), fakeSpec(t, "zero", "echo", nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Stop(10 * time.Second); err != nil {
		t.Errorf("Stop = %v", err)
	}
	_ = hclog.Info
}

func TestStopBySIGTERM(t *testing.T) {
	tr := stdio.New(stdio.Options{})
	inst := start(t, tr, fakeSpec(t, "sleepy", "sleeper", map[string]string{reportEnv: "sleeper"}))
	// Once it reports, the Go runtime has installed its signal handlers.
	if _, err := bufio.NewReader(inst.Stdout()).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	err := inst.Stop(0) // no grace: straight to SIGTERM, which the sleeper obeys
	var ee *core.ExitError
	if expectPIDNS(t) {
		// The Go runtime's SIGTERM handler re-raises the signal to die
		// of it, which a namespace init cannot (a documented limit): the
		// runtime then exits with status 2.
		if !errors.As(err, &ee) || ee.Signal != "" || ee.Code != 2 {
			t.Fatalf("Stop = %v, want an ExitError for exit status 2", err)
		}
	} else if !errors.As(err, &ee) || ee.Signal != "SIGTERM" || ee.Code != -1 {
		t.Fatalf("Stop = %v, want an ExitError for SIGTERM", err)
	}
	if !procGone(inst.PID()) {
		t.Errorf("pid %d still in the process table", inst.PID())
	}
}

// A descendant that leaves the process group escapes its signals; Kill must
// still return, and unblock a pending Stdout read, instead of waiting for
// pipes the escapee holds. Without a PID namespace the escapee survives
// the Kill; in one, the server's death takes it.
func TestKillWithEscapedDescendant(t *testing.T) {
	tr := stdio.New(stdio.Options{StderrDrain: 20 * time.Millisecond})
	inst := start(t, tr, fakeSpec(t, "escaper", "escaper", nil))
	r := bufio.NewReader(inst.Stdout())
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	epid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "escapee "))
	if err != nil {
		t.Fatalf("bad line %q", line)
	}
	t.Cleanup(func() {
		syscall.Kill(epid, syscall.SIGKILL)
		waitGone(t, epid, "escapee")
	})
	readErr := make(chan error, 1)
	go func() {
		_, err := r.ReadString('\n') // blocks: the escapee holds stdout
		readErr <- err
	}()
	within(t, "Kill", func() { inst.Kill() })
	within(t, "the pending Stdout read", func() {
		if err := <-readErr; err != io.EOF {
			t.Errorf("pending read after Kill = %v, want io.EOF", err)
		}
	})
	waitGone(t, inst.PID(), "server")
	if expectPIDNS(t) {
		// Leaving the process group does not leave the PID namespace.
		waitGone(t, epid, "escapee")
	} else if procGone(epid) {
		t.Errorf("escapee %d died: the test no longer exercises an escaped descendant", epid)
	}
}
