package goplugin_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"yolop.dev/core"
	"yolop.dev/transport/goplugin"
	"yolop.dev/transport/stdio"
)

// Binaries built in TestMain, into a temporary directory.
var (
	testPlugin string // internal/testplugin
	echoPlugin string // examples/echo
)

// fakeHostEnv makes a re-executed test binary play a host (see fakeHost).
const fakeHostEnv = "YOLOP_GOPLUGIN_FAKE_HOST"

func TestMain(m *testing.M) {
	if os.Getenv(fakeHostEnv) != "" {
		os.Exit(fakeHost(os.Getenv(fakeHostEnv)))
	}
	dir, err := os.MkdirTemp("", "goplugin-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testPlugin = filepath.Join(dir, "testplugin")
	echoPlugin = filepath.Join(dir, "yolop-extension-echo-goplugin")
	for pkg, out := range map[string]string{"./internal/testplugin": testPlugin, "./examples/echo": echoPlugin} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n", pkg, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(goleakOptions...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// goleakOptions ignore what gRPC keeps for the life of the process.
var goleakOptions = []goleak.Option{}

// hangGuard bounds a wait only so that a broken test fails instead of
// hanging: no performance threshold, and generous, because a process
// start can take seconds on a loaded machine.
const hangGuard = 2 * time.Minute

// newTransport is a transport with a short TermGrace, logging into log
// when it is non-nil.
func newTransport(log hclog.Logger) *goplugin.Transport {
	return goplugin.New(goplugin.Options{Logger: log, Process: stdio.Options{TermGrace: 200 * time.Millisecond}})
}

// spec runs the test plugin in mode under the extension name.
func spec(name string, args ...string) core.ServerSpec {
	return core.ServerSpec{Name: name, Transport: core.TransportGoPlugin, Command: testPlugin, Args: args}
}

func start(t *testing.T, tr core.Transport, s core.ServerSpec) core.Instance {
	t.Helper()
	inst, err := tr.Start(context.Background(), s)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { inst.Kill() })
	return inst
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func captureLogger() (hclog.Logger, *logBuffer) {
	b := &logBuffer{}
	return hclog.New(&hclog.LoggerOptions{Name: "host", Output: b, Level: hclog.Debug}), b
}

// procGone reports whether pid is no longer running: absent from /proc,
// or a zombie waiting for a reaper that is not us.
func procGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] == 'Z' || s[i+2] == 'X'
}

// waitGone polls until pid is gone, for up to hangGuard.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !procGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// children lists the running child processes of this test binary whose
// executable is exe.
func children(t *testing.T, exe string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || procGone(pid) {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(self) {
			continue
		}
		if target, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && target == exe {
			out = append(out, pid)
		}
	}
	return out
}

// noChildren waits until no child of this process runs exe.
func noChildren(t *testing.T, exe string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		left := children(t, exe)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin processes %v of %s are still running", left, exe)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
