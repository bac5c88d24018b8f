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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/transport/stdio"
)

// pidnsModeEnv, when "off", makes this test binary (and the fake hosts it
// starts) run servers without PID namespaces through the transport's test
// hook; "userns" makes it add a user namespace even when privileged.
const pidnsModeEnv = "YOLOP_STDIO_PIDNS"

// pidnsPermitted reports whether this process may start a child as the
// init of a new PID namespace (with a user namespace mapping our own ids),
// probed with os/exec directly rather than through the transport.
var pidnsPermitted = sync.OnceValues(func() (bool, error) {
	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	c := exec.Command(self)
	c.Env = []string{fakeEnv + "=printenv"}
	uid, gid := os.Geteuid(), os.Getegid()
	c.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWPID | syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	err = c.Run()
	return err == nil, err
})

// expectPIDNS reports whether servers started now are expected to run in
// PID namespaces of their own: unless the run forces them off, whenever
// the kernel permits them.
func expectPIDNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(pidnsModeEnv) == "off" {
		return false
	}
	ok, err := pidnsPermitted()
	if !ok {
		t.Logf("PID namespaces are not permitted here (%v): servers run without them", err)
	}
	return ok
}

// needPIDNS skips a test of what only PID namespaces provide when servers
// run without them.
func needPIDNS(t *testing.T) {
	t.Helper()
	if !expectPIDNS(t) {
		t.Skip("servers run without PID namespaces here; the limits of that mode are in the package doc")
	}
}

// ownPIDNS reports whether pid runs in a PID namespace other than ours.
func ownPIDNS(t *testing.T, pid int) bool {
	t.Helper()
	mine, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		t.Fatalf("PID namespace of %d: %v", pid, err)
	}
	return theirs != mine
}

// nsPIDs returns the NSpid line of pid's /proc status: its pid in each
// PID namespace it is in, outermost first.
func nsPIDs(t *testing.T, pid int) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return strings.Fields(v)
		}
	}
	t.Fatalf("no NSpid in /proc/%d/status", pid)
	return nil
}

// readPIDs reads "<label> <pid>" lines from r until it has every label.
func readPIDs(t *testing.T, r *bufio.Reader, labels ...string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for len(pids) < len(labels) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading pids %v (have %v): %v", labels, pids, err)
		}
		label, n, ok := strings.Cut(strings.TrimSpace(line), " ")
		pid, err := strconv.Atoi(n)
		if !ok || err != nil {
			t.Fatalf("bad line %q", line)
		}
		pids[label] = pid
	}
	for _, l := range labels {
		if _, ok := pids[l]; !ok {
			t.Fatalf("no %q among %v", l, pids)
		}
	}
	return pids
}

// killLeftovers kills what a failed test leaves running, so that a
// failure does not leak processes into the machine.
func killLeftovers(t *testing.T, pids map[string]int) {
	t.Cleanup(func() {
		for _, pid := range pids {
			if !procGone(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

func TestServerRunsInOwnPIDNamespace(t *testing.T) {
	tr := stdio.New(stdio.Options{})
	inst := start(t, tr, fakeSpec(t, "echo", "echo", nil))
	pid := inst.PID()
	own := inst.(*stdio.Instance).OwnPIDNamespace()
	if !expectPIDNS(t) {
		if ownPIDNS(t, pid) || own {
			t.Errorf("server %d runs in a PID namespace of its own (OwnPIDNamespace %v); want none in this mode", pid, own)
		}
		return
	}
	if !ownPIDNS(t, pid) || !own {
		t.Fatalf("server %d: own PID namespace %v, OwnPIDNamespace %v; want both", pid, ownPIDNS(t, pid), own)
	}
	// PID is the host-visible pid: the outermost NSpid entry; inside its
	// namespace the server is 1.
	if got := nsPIDs(t, pid); len(got) < 2 || got[len(got)-2] != strconv.Itoa(pid) || got[len(got)-1] != "1" {
		t.Errorf("NSpid of PID() %d = %v; want the pid as we see it, then 1", pid, got)
	}
	if err := inst.Stop(10 * time.Second); err != nil {
		t.Errorf("Stop = %v", err)
	}
}

// A host killed with SIGKILL takes its server and every descendant of it:
// one in the server's process group and one in a session of its own, both
// ignoring SIGTERM.
func TestHostKilledDescendantsDie(t *testing.T) {
	needPIDNS(t)
	host := exec.Command(testBinary(t))
	host.Env = append(os.Environ(), fakeEnv+"=treehost")
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
	pids := readPIDs(t, r, "server", "grandchild", "daemon")
	killLeftovers(t, pids)
	if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("host: %q, %v", line, err)
	}
	for what, pid := range pids {
		if procGone(pid) {
			t.Fatalf("%s %d is not running before the host is killed", what, pid)
		}
	}
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for what, pid := range pids {
		waitGone(t, pid, what+" of the killed host")
	}
}

// Stop and Kill end every descendant of the server, including one that
// left the process group with setsid and ignores SIGTERM, whether the
// server itself has to be killed or exits on the end of its stdin.
func TestStopEndsDescendants(t *testing.T) {
	needPIDNS(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		stop func(core.Instance) error
		want func(error) bool
	}{
		{"Stop of a server that ignores SIGTERM", nil,
			func(inst core.Instance) error { return inst.Stop(50 * time.Millisecond) }, isSignal("SIGKILL")},
		{"Kill", nil,
			func(inst core.Instance) error { return inst.Kill() }, isSignal("SIGKILL")},
		{"Stop of a server that exits on stdin EOF", map[string]string{treeExitEnv: "1"},
			func(inst core.Instance) error { return inst.Stop(10 * time.Second) }, func(err error) bool { return err == nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := stdio.New(stdio.Options{TermGrace: 50 * time.Millisecond})
			inst := start(t, tr, fakeSpec(t, "tree", "tree", tc.env))
			pids := readPIDs(t, bufio.NewReader(inst.Stdout()), "grandchild", "daemon")
			killLeftovers(t, pids)
			for what, pid := range pids {
				if procGone(pid) {
					t.Fatalf("%s %d is not running before the stop", what, pid)
				}
			}
			var err error
			within(t, "stopping", func() { err = tc.stop(inst) })
			if !tc.want(err) {
				t.Errorf("stop = %v", err)
			}
			// The kernel reaps a namespace's processes before its init
			// becomes a zombie, so none is left once the stop returns.
			for what, pid := range pids {
				if !procGone(pid) {
					t.Errorf("%s %d still running when the stop returned", what, pid)
				}
			}
			waitGone(t, inst.PID(), "server")
			for what, pid := range pids {
				waitGone(t, pid, what)
			}
		})
	}
}

func isSignal(name string) func(error) bool {
	return func(err error) bool {
		var ee *core.ExitError
		return errors.As(err, &ee) && ee.Signal == name
	}
}

// A server with no SIGTERM handler still stops at the SIGTERM step, not a
// TermGrace later: the init of a PID namespace would drop the SIGTERM, so
// the transport does what SIGTERM's default action would have done.
func TestStopWithoutSIGTERMHandler(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("no sleep command: %v", err)
	}
	logger, buf := captureLogger()
	tr := stdio.New(stdio.Options{Logger: logger, TermGrace: time.Hour})
	inst := start(t, tr, core.ServerSpec{Name: "sleep", Command: sleep, Args: []string{"3600"}})
	var stopErr error
	within(t, "Stop with an hour of TermGrace", func() { stopErr = inst.Stop(0) })
	var ee *core.ExitError
	if !errors.As(stopErr, &ee) || ee.Code != -1 {
		t.Fatalf("Stop = %v, want an ExitError for a signal", stopErr)
	}
	if expectPIDNS(t) {
		if ee.Signal != "SIGKILL" || !strings.Contains(buf.String(), "no SIGTERM handler") {
			t.Errorf("Stop = %v; want SIGKILL in place of the dropped SIGTERM, and a note of it in the log:\n%s", stopErr, buf.String())
		}
	} else if ee.Signal != "SIGTERM" {
		t.Errorf("Stop = %v, want an ExitError for SIGTERM", stopErr)
	}
	if strings.Contains(buf.String(), "ignored SIGTERM") {
		t.Errorf("the stop waited for TermGrace:\n%s", buf.String())
	}
	if _, err := io.ReadAll(inst.Stdout()); err != nil {
		t.Errorf("reading stdout after Stop: %v", err)
	}
}

// When the kernel refuses the namespaces, Start falls back to a plain
// start, remembers the refusal for the rest of the process and logs it
// once; a command that fails on its own is not taken for a refusal.
func TestPIDNamespaceRefusedFallsBack(t *testing.T) {
	needPIDNS(t)
	t.Run("refused", func(t *testing.T) {
		// clone(2) refuses CLONE_NEWNS with CLONE_FS with EINVAL, as a
		// kernel built without PID namespaces refuses CLONE_NEWPID.
		defer stdio.SetNSCloneflagsForTest(syscall.CLONE_NEWNS | syscall.CLONE_FS)()
		logger, buf := captureLogger()
		tr := stdio.New(stdio.Options{Logger: logger})
		for range 2 {
			inst := start(t, tr, fakeSpec(t, "plain", "echo", nil))
			if ownPIDNS(t, inst.PID()) {
				t.Errorf("server %d has a PID namespace of its own after a refusal", inst.PID())
			}
			if _, err := io.WriteString(inst.Stdin(), "ping\n"); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(inst.Stdout()).ReadString('\n'); err != nil || line != "ping\n" {
				t.Fatalf("echo: %q, %v", line, err)
			}
			if err := inst.Stop(10 * time.Second); err != nil {
				t.Errorf("Stop = %v", err)
			}
		}
		if !stdio.PIDNamespacesRefusedForTest() {
			t.Error("the refusal is not remembered")
		}
		if n := strings.Count(buf.String(), "PID namespaces are not permitted here"); n != 1 {
			t.Errorf("the refusal was logged %d times, want once:\n%s", n, buf.String())
		}
	})
	t.Run("failing command", func(t *testing.T) {
		defer stdio.SetNSCloneflagsForTest(0)()
		// A script whose interpreter is not executable: execve fails
		// with EACCES, with or without namespaces.
		dir := t.TempDir()
		interp := filepath.Join(dir, "interp")
		if err := os.WriteFile(interp, []byte("not a program\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, "srv")
		if err := os.WriteFile(script, []byte("#!"+interp+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := stdio.New(stdio.Options{}).Start(context.Background(), core.ServerSpec{Name: "broken", Command: script})
		if !errors.Is(err, syscall.EACCES) || !strings.Contains(err.Error(), `"broken"`) {
			t.Errorf("Start = %v, want EACCES naming the extension", err)
		}
		if stdio.PIDNamespacesRefusedForTest() {
			t.Error("a failing command was taken for a refusal of namespaces")
		}
	})
}

// TestSuiteInOtherModes runs the whole suite again in a child test
// process for each other PID-namespace mode: "off", the fallback used
// where the kernel refuses namespaces, must keep every promise it made
// before namespaces; "userns" takes the unprivileged path (a user
// namespace around the PID namespace) even when the tests run as root.
func TestSuiteInOtherModes(t *testing.T) {
	if os.Getenv(pidnsModeEnv) != "" {
		t.Skip("this is already a run in another mode")
	}
	for _, mode := range []string{"off", "userns"} {
		t.Run(mode, func(t *testing.T) {
			if ok, err := pidnsPermitted(); mode == "userns" && !ok {
				t.Skipf("user and PID namespaces are not permitted here: %v", err)
			}
			args := []string{"-test.count=1", "-test.timeout=10m", "-test.skip=^TestSuiteInOtherModes$"}
			if testing.Verbose() {
				args = append(args, "-test.v")
			}
			cmd := exec.Command(testBinary(t), args...)
			cmd.Env = append(os.Environ(), pidnsModeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the suite with %s=%s: %v\n%s", pidnsModeEnv, mode, err, out)
			}
			if testing.Verbose() {
				t.Logf("%s", out)
			}
		})
	}
}
