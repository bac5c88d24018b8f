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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"yolop.dev/core"
	"yolop.dev/transport/stdio"
)

// fakeEnv selects the fake server a re-executed test binary plays.
const fakeEnv = "YOLOP_STDIO_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServer(mode))
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
		sleepForever()
	case "forker":
		// Leaves a grandchild holding all three pipes, then exits when
		// stdin closes.
		self, _ := os.Executable()
		gc := exec.Command(self)
		gc.Env = append(os.Environ(), fakeEnv+"=sleeper")
		gc.Stdin, gc.Stdout, gc.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("grandchild %d\n", gc.Process.Pid)
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "escaper":
		// Leaves a grandchild in a new session (out of the process
		// group) holding stdout and stderr, then sleeps.
		self, _ := os.Executable()
		gc := exec.Command(self)
		gc.Env = append(os.Environ(), fakeEnv+"=sleeper")
		gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
		gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("escapee %d\n", gc.Process.Pid)
		sleepForever()
	case "crash":
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(os.Stderr, "boom line %d\n", i)
		}
		return 3
	case "selfkill":
		fmt.Fprintln(os.Stderr, "about to die")
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
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
