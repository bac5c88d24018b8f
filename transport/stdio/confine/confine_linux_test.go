package confine_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"yolop.dev/core"
	"yolop.dev/transport/stdio/confine"
)

const (
	serverEnv = "CONFINE_TEST_SERVER" // "go": play the Go test server
)

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "go" {
		goServer()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// goServer answers one line per request line: "ok", "denied <err>" when
// the sandbox refused, "error <err>" otherwise.
func goServer() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		kind, target, _ := strings.Cut(in.Text(), " ")
		var err error
		switch kind {
		case "ping":
		case "read":
			_, err = os.ReadFile(target)
		case "write":
			err = os.WriteFile(target, []byte("x"), 0o600)
		case "connect":
			var c net.Conn
			if c, err = net.Dial("tcp", "127.0.0.1:"+target); err == nil {
				c.Close()
			}
		case "exec":
			err = exec.Command(target, "-c", "exit 0").Run()
		case "bind":
			// net.Listen tries Multipath TCP first (Go 1.24+), which
			// Landlock's TCP rules do not cover; the launcher's seccomp
			// filter makes it fall back to TCP.
			var l net.Listener
			if l, err = net.Listen("tcp", "127.0.0.1:"+target); err == nil {
				l.Close()
			}
		case "mptcp-connect":
			var fd int
			if fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 262); err == nil {
				port, _ := strconv.Atoi(target)
				err = syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
				syscall.Close(fd)
			}
		case "child-read":
			// A child of the server (run through /bin/sh, so Exec must be
			// allowed) tries the read: the rules are inherited.
			out, cerr := exec.Command("/bin/sh", "-c", "cat "+target).CombinedOutput()
			if cerr != nil && strings.Contains(string(out), "Permission denied") {
				err = syscall.EACCES
			} else if cerr != nil {
				err = fmt.Errorf("%v: %s", cerr, out)
			}
		case "tmpdir":
			err = os.WriteFile(filepath.Join(os.Getenv("TMPDIR"), "f"), nil, 0o600)
		default:
			err = errors.New("unknown request")
		}
		switch {
		case err == nil:
			fmt.Println("ok")
		case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
			fmt.Println("denied", err)
		default:
			fmt.Println("error", err)
		}
	}
}

const pythonServer = `#!/usr/bin/env python3
import errno, os, socket, subprocess, sys
for line in sys.stdin:
    kind, _, target = line.strip().partition(' ')
    try:
        if kind == 'read':
            open(target).read(1)
        elif kind == 'write':
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o600))
        elif kind == 'connect':
            socket.create_connection(('127.0.0.1', int(target)), 5).close()
        elif kind == 'exec':
            subprocess.run([target, '-c', 'exit 0'], check=True)
        print('ok', flush=True)
    except OSError as e:
        print('denied' if e.errno in (errno.EACCES, errno.EPERM) else 'error', e, flush=True)
    except Exception as e:
        print('error', e, flush=True)
`

const nodeServer = `#!/usr/bin/env node
const fs = require('fs'), net = require('net'), cp = require('child_process');
const rl = require('readline').createInterface({ input: process.stdin });
const answer = (e) => {
  if (!e) return console.log('ok');
  console.log((e.code === 'EACCES' || e.code === 'EPERM') ? 'denied' : 'error', String(e));
};
let chain = Promise.resolve();
rl.on('line', (line) => {
  chain = chain.then(() => new Promise((done) => {
    const i = line.indexOf(' ');
    const kind = i < 0 ? line : line.slice(0, i), target = i < 0 ? '' : line.slice(i + 1);
    try {
      if (kind === 'read') fs.readFileSync(target);
      else if (kind === 'write') fs.writeFileSync(target, 'x');
      else if (kind === 'exec') { const r = cp.spawnSync(target, ['-c', 'exit 0']); if (r.error) throw r.error; }
      else if (kind === 'connect') {
        const s = net.connect(Number(target), '127.0.0.1');
        s.on('connect', () => { s.destroy(); answer(null); done(); });
        s.on('error', (e) => { answer(e); done(); });
        return;
      }
      answer(null);
    } catch (e) { answer(e); }
    done();
  }));
});
`

// requireLandlock skips when the kernel has no Landlock: nothing can be
// confined there, which TestReportStrings covers.
func requireLandlock(t *testing.T) {
	t.Helper()
	if confine.KernelABI() < 4 {
		t.Skipf("kernel Landlock ABI %d: these tests need ABI 4 (file system and TCP rules)", confine.KernelABI())
	}
}

// A world is the directories and ports of one test: a workspace (rw), a
// package (ro), a directory outside the grant with a secret, a declared
// port and an undeclared one, both listening.
type world struct {
	workspace, pkg, outside, secret string
	declared, undeclared            uint16
	bind                            uint16 // a port declared for bind
}

func newWorld(t *testing.T) *world {
	w := &world{workspace: t.TempDir(), pkg: t.TempDir(), outside: t.TempDir()}
	w.secret = filepath.Join(w.outside, "secret")
	if err := os.WriteFile(w.secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.pkg, "data"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.declared, w.undeclared = listen(t), listen(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.bind = uint16(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	return w
}

func (w *world) sandbox(execOK bool) *core.Confinement {
	return &core.Confinement{
		Paths:   []core.ConfinedPath{{Path: w.workspace, Write: true}, {Path: w.pkg}},
		Connect: []uint16{w.declared},
		Bind:    []uint16{w.bind},
		Exec:    execOK,
	}
}

func listen(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

// start runs program confined by c through the test binary as launcher
// and returns a function sending one request and returning the answer.
func start(t *testing.T, program string, args []string, c *core.Confinement, env []string) func(string) string {
	t.Helper()
	tmp := t.TempDir()
	env = append(env, "TMPDIR="+tmp)
	lc, err := confine.Launch{Program: program, Args: args, Env: env, Sandbox: c, TempDir: tmp}.Command()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lc.Path)
	cmd.Args, cmd.Env, cmd.ExtraFiles = lc.Args, lc.Env, lc.ExtraFiles
	stderr := new(lockedBuffer)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		lc.Close()
		t.Fatal(err)
	}
	if err := lc.Started(); err != nil {
		cmd.Wait()
		t.Fatalf("start %s: %v (stderr: %s)", program, err, stderr.String())
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	r := bufio.NewReader(stdout)
	return func(req string) string {
		t.Helper()
		if _, err := io.WriteString(stdin, req+"\n"); err != nil {
			t.Fatalf("%s: write %q: %v (stderr: %s)", program, req, err, stderr.String())
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: answer to %q: %v (stderr: %s)", program, req, err, stderr.String())
		}
		return strings.TrimSpace(line)
	}
}

// expect asks each request and checks the answer's first word.
func expect(t *testing.T, ask func(string) string, cases map[string]string) {
	t.Helper()
	for req, want := range cases {
		got := ask(req)
		if word, _, _ := strings.Cut(got, " "); word != want {
			t.Errorf("%q: got %q, want %s", req, got, want)
		}
	}
}

func (w *world) cases() map[string]string {
	p := strconv.Itoa
	return map[string]string{
		"read " + w.secret:                              "denied",
		"write " + filepath.Join(w.outside, "new"):      "denied",
		"write " + filepath.Join(w.pkg, "new"):          "denied",
		"connect " + p(int(w.undeclared)):               "denied",
		"exec /bin/sh":                                  "denied",
		"read " + filepath.Join(w.pkg, "data"):          "ok",
		"write " + filepath.Join(w.workspace, "output"): "ok",
		"connect " + p(int(w.declared)):                 "ok",
	}
}

func hostEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
}

// TestGoServerConfined: a Go server starts under a default-like sandbox
// and, from inside its process, forbidden reads, writes, connects and
// execs fail while the declared ones work.
func TestGoServerConfined(t *testing.T) {
	requireLandlock(t)
	t.Parallel()
	w := newWorld(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ask := start(t, exe, []string{exe}, w.sandbox(false), append(hostEnv(), serverEnv+"=go"))
	expect(t, ask, w.cases())
	expect(t, ask, map[string]string{"tmpdir": "ok", "read /proc/self/status": "ok", "read /etc/passwd": "ok"})
	// No TCP port is declared for binding, and Multipath TCP does not
	// get around the rules.
	free := listen(t) // a port in use here; the bind is refused before that matters
	ask2 := map[string]string{
		"bind " + strconv.Itoa(int(free)):                  "denied",
		"mptcp-connect " + strconv.Itoa(int(w.undeclared)): "error",
	}
	expect(t, ask, ask2)
	if got := ask("mptcp-connect " + strconv.Itoa(int(w.undeclared))); !strings.Contains(got, "protocol not supported") {
		t.Errorf("an MPTCP socket: got %q, want it refused (protocol not supported)", got)
	}
}

// TestPythonServerConfined: a Python server started through
// "#!/usr/bin/env python3", found through the PATH (here possibly a
// version manager's shim under the home directory), starts and is
// confined.
func TestPythonServerConfined(t *testing.T) {
	requireLandlock(t)
	t.Parallel()
	w := newWorld(t)
	script := filepath.Join(w.pkg, "server.py")
	if err := os.WriteFile(script, []byte(pythonServer), 0o755); err != nil {
		t.Fatal(err)
	}
	ask := start(t, script, []string{script}, w.sandbox(false), hostEnv())
	expect(t, ask, w.cases())
}

// TestPythonCommandConfined: a manifest's command "python3" with the
// script as an argument, found through the PATH (here possibly a version
// manager's shim under the home directory, a shell script that would run
// the system's programs), starts and is confined.
func TestPythonCommandConfined(t *testing.T) {
	requireLandlock(t)
	t.Parallel()
	w := newWorld(t)
	script := filepath.Join(w.pkg, "server.py")
	if err := os.WriteFile(script, []byte(pythonServer), 0o644); err != nil {
		t.Fatal(err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal(err)
	}
	ask := start(t, python, []string{"python3", "-u", script}, w.sandbox(false), hostEnv())
	expect(t, ask, w.cases())
}

// TestPythonCommandConfinedWithAnotherHome: with HOME pointing elsewhere
// (as a test or a service account may run yolop), a version manager's
// shim cannot say which interpreter it runs; the server still starts,
// its shim running the manager from the manager's own root, and stays
// confined to its files.
func TestPythonCommandConfinedWithAnotherHome(t *testing.T) {
	requireLandlock(t)
	t.Parallel()
	w := newWorld(t)
	script := filepath.Join(w.pkg, "server.py")
	if err := os.WriteFile(script, []byte(pythonServer), 0o644); err != nil {
		t.Fatal(err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	ask := start(t, python, []string{"python3", "-u", script}, w.sandbox(false), env)
	cases := w.cases()
	delete(cases, "exec /bin/sh") // an unresolved shim needs the system's programs
	expect(t, ask, cases)
}

// TestNodeServerConfined: the same for a Node server.
func TestNodeServerConfined(t *testing.T) {
	requireLandlock(t)
	t.Parallel()
	w := newWorld(t)
	script := filepath.Join(w.pkg, "server.js")
	if err := os.WriteFile(script, []byte(nodeServer), 0o755); err != nil {
		t.Fatal(err)
	}
	ask := start(t, script, []string{script}, w.sandbox(false), hostEnv())
	expect(t, ask, w.cases())
}

// TestChildrenInheritTheRules: a server allowed to run programs runs
// /bin/sh, and that child still cannot read outside the grant.
func TestChildrenInheritTheRules(t *testing.T) {
	requireLandlock(t)
	t.Parallel()
	w := newWorld(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ask := start(t, exe, []string{exe}, w.sandbox(true), append(hostEnv(), serverEnv+"=go"))
	expect(t, ask, map[string]string{
		"exec /bin/sh":                               "ok",
		"child-read " + w.secret:                     "denied",
		"child-read " + filepath.Join(w.pkg, "data"): "ok",
	})
}

// TestSmallLauncher: the small launcher, yolop-sandbox, named by
// $YOLOP_SANDBOX_LAUNCHER, confines a server as the host's own binary
// does: the same forbidden operations fail and the declared ones work.
func TestSmallLauncher(t *testing.T) {
	requireLandlock(t)
	small := filepath.Join(t.TempDir(), confine.SmallLauncher)
	if out, err := exec.Command("go", "build", "-o", small, "yolop.dev/transport/stdio/confine/cmd/yolop-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("build yolop-sandbox: %v\n%s", err, out)
	}
	t.Setenv(confine.LauncherEnv, small)
	w := newWorld(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lc, err := confine.Launch{Program: exe, Args: []string{exe}, Sandbox: w.sandbox(false)}.Command()
	if err != nil {
		t.Fatal(err)
	}
	lc.Close()
	if lc.Path != small {
		t.Fatalf("launcher = %s, want %s from %s", lc.Path, small, confine.LauncherEnv)
	}
	ask := start(t, exe, []string{exe}, w.sandbox(false), append(hostEnv(), serverEnv+"=go"))
	expect(t, ask, w.cases())
	results, err := confine.Probe(context.Background(), w.sandbox(false), confine.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.OK() {
			t.Errorf("probe through the small launcher: %s", r)
		}
	}
}

// TestLauncherWithoutInitIsRefused: a launcher binary that does not link
// this package (so never runs Init) is not run as a server: the start
// fails and says why.
func TestLauncherWithoutInitIsRefused(t *testing.T) {
	t.Parallel()
	// A program that does not link this package: it never runs Init.
	exe := "/bin/true"
	lc, err := confine.Launch{Launcher: exe, Program: "/bin/true", Args: []string{"true"}, Sandbox: &core.Confinement{}}.Command()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lc.Path)
	cmd.Args, cmd.Env, cmd.ExtraFiles = lc.Args, lc.Env, lc.ExtraFiles
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serr := lc.Started()
	cmd.Wait()
	if serr == nil || !strings.Contains(serr.Error(), "links yolop.dev/transport/stdio/confine") || !strings.Contains(serr.Error(), exe) {
		t.Fatalf("Started() = %v, want the launcher %s refused as no launcher", serr, exe)
	}
}

// TestProbe: the probes report the forbidden operations blocked and the
// declared ones allowed, for both values of Exec.
func TestProbe(t *testing.T) {
	requireLandlock(t)
	t.Parallel()
	w := newWorld(t)
	for _, execOK := range []bool{false, true} {
		results, err := confine.Probe(context.Background(), w.sandbox(execOK), confine.ProbeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]bool{}
		for _, r := range results {
			if !r.OK() {
				t.Errorf("exec=%v: %s", execOK, r)
			}
			kinds[fmt.Sprintf("%s/%v", r.Kind, r.WantBlocked)] = true
			if r.Kind == "exec" && r.WantBlocked == execOK {
				t.Errorf("exec=%v: the exec probe wants blocked=%v", execOK, r.WantBlocked)
			}
		}
		for _, k := range []string{"read/true", "write/true", "connect/true", "bind/true", "bind/false", "read/false", "write/false", "connect/false"} {
			if !kinds[k] {
				t.Errorf("exec=%v: no %s probe in %v", execOK, k, results)
			}
		}
	}
}

// TestProbeWithoutLandlockSaysNotBlocked: with the ABI lowered to 0 nothing
// is enforced, and the probes say so instead of claiming a block.
func TestProbeWithoutLandlockSaysNotBlocked(t *testing.T) {
	defer confine.SetKernelABIForTesting(0)()
	w := newWorld(t)
	results, err := confine.Probe(context.Background(), w.sandbox(false), confine.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Blocked {
			t.Errorf("%s blocked with no Landlock", r)
		}
		if r.Kind == "read" && r.WantBlocked && r.OK() {
			t.Errorf("%s reported OK with no Landlock", r)
		}
	}
}

// lockedBuffer is a strings.Builder safe to read while a process writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
