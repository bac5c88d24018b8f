package stdio_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/transport/stdio"
	"yolop.dev/transport/stdio/confine"
)

// sandboxedServer answers one line per request "<kind> <target>": "ok
// [detail]", "denied <err>" when the sandbox refused, "error <err>".
func sandboxedServer() int {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		kind, target, _ := strings.Cut(in.Text(), " ")
		var err error
		detail := ""
		switch kind {
		case "read":
			_, err = os.ReadFile(target)
		case "write":
			err = os.WriteFile(target, []byte("x"), 0o600)
		case "exec":
			err = exec.Command(target, "-c", "exit 0").Run()
		case "pid":
			detail = fmt.Sprint(os.Getpid())
		case "tmpdir":
			detail = os.Getenv("TMPDIR")
			err = os.WriteFile(filepath.Join(detail, "f"), nil, 0o600)
		default:
			err = errors.New("unknown request")
		}
		switch {
		case err == nil:
			fmt.Println("ok", detail)
		case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
			fmt.Println("denied", err)
		default:
			fmt.Println("error", err)
		}
	}
	return 0
}

// TestSandboxedServer: a server with a Sandbox starts through the
// launcher (this test binary) and is confined: it reads and writes its
// workspace and private temp directory, not a file outside, cannot run
// /bin/sh, is still its PID namespace's init, and its temp directory is
// removed when it stops.
func TestSandboxedServer(t *testing.T) {
	if confine.KernelABI() < 1 {
		t.Skip("the kernel has no Landlock: nothing to confine (the report tests cover it)")
	}
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := fakeSpec(t, "sandboxed", "sandboxed", nil)
	spec.Sandbox = &core.Confinement{Paths: []core.ConfinedPath{{Path: ws, Write: true}}}
	inst := start(t, stdio.New(stdio.Options{}), spec)
	r := bufio.NewReader(inst.Stdout())
	ask := func(req string) string {
		t.Helper()
		if _, err := io.WriteString(inst.Stdin(), req+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%q: %v (stderr: %v)", req, err, inst.(*stdio.Instance).StderrTail())
		}
		return strings.TrimSpace(line)
	}
	for req, want := range map[string]string{
		"read " + secret:                       "denied",
		"write " + filepath.Join(outside, "x"): "denied",
		"exec /bin/sh":                         "denied",
		"write " + filepath.Join(ws, "x"):      "ok",
	} {
		if got := ask(req); !strings.HasPrefix(got, want) {
			t.Errorf("%q: got %q, want %s", req, got, want)
		}
	}
	if inst.(*stdio.Instance).OwnPIDNamespace() {
		if got := ask("pid"); got != "ok 1" {
			t.Errorf("pid in its namespace: got %q, want ok 1 (exec keeps the launcher's pid)", got)
		}
	}
	got := ask("tmpdir")
	tmp, ok := strings.CutPrefix(got, "ok ")
	if !ok || tmp == "" || tmp == os.TempDir() {
		t.Fatalf("tmpdir: got %q, want ok and a private directory", got)
	}
	if err := inst.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private temp directory %s outlived the server: %v", tmp, err)
	}
}

// TestSandboxRequiredRefusedWhenUnenforceable: a required sandbox on a
// kernel whose ABI lacks TCP rules is refused with the report's text, and
// the server never runs.
func TestSandboxRequiredRefusedWhenUnenforceable(t *testing.T) {
	defer confine.SetKernelABIForTesting(3)()
	spec := fakeSpec(t, "required", "echo", nil)
	spec.Sandbox = &core.Confinement{Required: true}
	inst, err := stdio.New(stdio.Options{}).Start(ctxBackground(), spec)
	if err == nil {
		inst.Kill()
		t.Fatal("Start succeeded; want a refusal")
	}
	if !strings.Contains(err.Error(), "partly sandboxed: TCP rules not enforced (Landlock ABI 3)") || !strings.Contains(err.Error(), "required") {
		t.Fatalf("Start: %v; want the refusal naming what is not enforced", err)
	}
}

// TestSandboxLauncherMustCallInit: a launcher binary that does not link
// the confine package (here /bin/true) is not taken for a started server.
func TestSandboxLauncherMustCallInit(t *testing.T) {
	t.Parallel()
	spec := fakeSpec(t, "noinit", "echo", nil)
	spec.Sandbox = &core.Confinement{}
	inst, err := stdio.New(stdio.Options{Launcher: "/bin/true"}).Start(ctxBackground(), spec)
	if err == nil {
		inst.Kill()
		t.Fatal("Start succeeded with a launcher that never applies the sandbox")
	}
	if !strings.Contains(err.Error(), "links yolop.dev/transport/stdio/confine") {
		t.Fatalf("Start: %v; want it to say what a launcher is", err)
	}
}
