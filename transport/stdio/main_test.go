//go:build linux

package stdio_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"yolop.dev/core"
	"yolop.dev/core/transporttest/conformance"
	"yolop.dev/transport/stdio"
)

// fakeEnv selects the fake server a re-executed test binary plays.
const fakeEnv = "YOLOP_STDIO_FAKE"

// Settings of the fake servers.
const (
	reportEnv     = "YOLOP_STDIO_REPORT"      // a sleeper prints "<label> <pid>"
	ignoreTermEnv = "YOLOP_STDIO_IGNORE_TERM" // a sleeper ignores SIGTERM
	treeExitEnv   = "YOLOP_STDIO_TREE_EXIT"   // the tree server exits when stdin closes
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(pidnsModeEnv); mode != "" {
		stdio.SetPIDNamespaceModeForTest(mode) // for the whole process
	}
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServer(mode))
	}
	if b := os.Getenv(conformanceEnv); b != "" {
		conformance.Main(b)
	}
	goleak.VerifyTestMain(m)
}

// fakeServer runs one named fake server and returns its exit code.
func fakeServer(mode string) int {
	switch mode {
	case "printenv":
		env := os.Environ()
		slices.Sort(env)
		for _, kv := range env {
			fmt.Println(kv)
		}
		return 0
	case "sandboxed":
		return sandboxedServer()
	case "echo":
		// Cooperative: echo stdin, exit when it closes.
		io.Copy(os.Stdout, os.Stdin)
		return 0
	case "stderr":
		fmt.Fprintln(os.Stderr, "hello from stderr")
		fmt.Fprintln(os.Stderr, "second line")
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "stubborn":
		// Ignores both stdin closing and SIGTERM.
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		sleepForever()
	case "sleeper":
		// With reportEnv set, first prints "<label> <pid>", the pid as
		// the host sees it; with ignoreTermEnv set, ignores SIGTERM.
		if os.Getenv(ignoreTermEnv) != "" {
			signal.Ignore(syscall.SIGTERM)
		}
		if label := os.Getenv(reportEnv); label != "" {
			pid, err := hostPID()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Printf("%s %d\n", label, pid)
		}
		sleepForever()
	case "forker":
		// Leaves a grandchild holding all three pipes (it reports its
		// pid), then exits when stdin closes.
		if err := startSleeper("grandchild", true, false, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "escaper":
		// Leaves a grandchild in a new session (out of the process
		// group) holding stdout and stderr, then sleeps.
		if err := startSleeper("escapee", false, true, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		sleepForever()
	case "tree":
		// Leaves two grandchildren that ignore SIGTERM and report their
		// pids: "grandchild" in the server's process group, "daemon" in a
		// session of its own. The server ignores SIGTERM and the end of
		// its stdin too, unless treeExitEnv is set: then it exits 0 when
		// stdin closes, leaving both behind.
		exitOnEOF := os.Getenv(treeExitEnv) != ""
		if !exitOnEOF {
			signal.Ignore(syscall.SIGTERM)
		}
		if err := startSleeper("grandchild", false, false, true); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := startSleeper("daemon", false, true, true); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if exitOnEOF {
			io.Copy(io.Discard, os.Stdin)
			return 0
		}
		sleepForever()
	case "treehost":
		return treeHost()
	case "crash":
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(os.Stderr, "boom line %d\n", i)
		}
		return 3
	case "selfkill":
		fmt.Fprintln(os.Stderr, "about to die")
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		// Reached only as the init of a PID namespace, which a signal
		// from itself cannot kill.
		fmt.Println("survived")
		sleepForever()
	case "flood":
		secret := os.Getenv("FOO_TOKEN")
		w := bufio.NewWriter(os.Stderr)
		fmt.Fprintf(w, "first: token=%s\n", secret)
		for i := range 2000 {
			fmt.Fprintf(w, "flood %d\n", i)
		}
		fmt.Fprintf(w, "long %s\n", strings.Repeat("x", 1<<20))
		fmt.Fprintf(w, "Authorization: Bearer hunter2\n")
		fmt.Fprintf(w, "\x1b[31mred\x1b[0m\n")
		fmt.Fprintf(w, "last: token=%s", secret) // no final newline
		w.Flush()
		return 0
	case "host":
		return fakeHost()
	}
	fmt.Fprintf(os.Stderr, "unknown fake server %q\n", mode)
	return 2
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// hostPID is this process's pid as the host sees it. /proc is the host's
// (servers get no mount namespace), so /proc/self names that pid even
// inside a PID namespace, where os.Getpid does not.
func hostPID() (int, error) {
	s, err := os.Readlink("/proc/self")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

// startSleeper starts this binary as a sleeper that prints "<label> <pid>"
// on the shared stdout. It shares stdin and stderr too when pipes is set
// (else just stdout and stderr), runs in a new session when setsid is set,
// and ignores SIGTERM when ignoreTerm is set.
func startSleeper(label string, pipes, setsid, ignoreTerm bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	gc := exec.Command(self)
	gc.Env = append(os.Environ(), fakeEnv+"=sleeper", reportEnv+"="+label)
	if ignoreTerm {
		gc.Env = append(gc.Env, ignoreTermEnv+"=1")
	}
	if pipes {
		gc.Stdin = os.Stdin
	}
	gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
	if setsid {
		gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	return gc.Start()
}

// fakeHost plays a host process: it starts a sleeper server, prints its pid,
// churns OS threads (the runtime ends a thread whose goroutine exits while
// locked to it: golang/go#27505), reports, and waits to be killed.
func fakeHost() int {
	self, _ := os.Executable()
	inst, err := stdio.New(stdio.Options{}).Start(ctxBackground(), core.ServerSpec{
		Name:    "sleeper",
		Command: self,
		Env:     map[string]string{fakeEnv: "sleeper", "GORACE": "atexit_sleep_ms=0"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("server %d\n", inst.PID())
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			runtime.LockOSThread() // never unlocked: the thread ends with us
			time.Sleep(time.Millisecond)
		})
	}
	wg.Wait()
	fmt.Println("churned")
	sleepForever()
	_ = inst.Kill()
	return 0
}

// treeHost plays a host process that starts the tree server through the
// transport, prints "server <pid>" and the tree's "grandchild <pid>" and
// "daemon <pid>" lines, then "ready", and waits to be killed.
func treeHost() int {
	self, _ := os.Executable()
	inst, err := stdio.New(stdio.Options{}).Start(ctxBackground(), core.ServerSpec{
		Name:    "tree",
		Command: self,
		Env:     map[string]string{fakeEnv: "tree", "GORACE": "atexit_sleep_ms=0"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("server %d\n", inst.PID())
	r := bufio.NewReader(inst.Stdout())
	for range 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading the tree server:", err)
			return 1
		}
		fmt.Print(line)
	}
	fmt.Println("ready")
	sleepForever()
	_ = inst.Kill()
	return 0
}
