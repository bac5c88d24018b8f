//go:build linux

package stdio

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWaitExitedLeavesAZombie checks the waiter's wait for a server's
// exit, on any kernel: it returns only once the process has exited, and
// leaves the process unreaped, so its group id cannot be reused before the
// group is killed.
func TestWaitExitedLeavesAZombie(t *testing.T) {
	checkExitWait(t, waitExitedNoReap)
}

// TestPollExitedUsesAPidfd checks the same of the poller's wait, and that
// a kernel with non-blocking pidfds gets it rather than waitid. On a
// kernel without them pollExited must say so at once, so that the waiter
// falls back to waitid.
func TestPollExitedUsesAPidfd(t *testing.T) {
	fd, err := unix.PidfdOpen(os.Getpid(), unix.PIDFD_NONBLOCK)
	if err != nil {
		cmd := startSleep(t)
		if _, ok := pollExited(cmd.Process.Pid); ok {
			t.Fatalf("pidfd_open fails here (%v), yet pollExited waited", err)
		}
		return
	}
	unix.Close(fd)
	checkExitWait(t, func(pid int) bool {
		exited, ok := pollExited(pid)
		if !ok {
			t.Error("this kernel has non-blocking pidfds, but pollExited did not use one")
		}
		return exited
	})
}

// checkExitWait runs wait on a live process, checks that it does not
// return while the process runs, kills the process, and checks that wait
// then reports the exit and leaves a zombie.
func checkExitWait(t *testing.T, wait func(pid int) bool) {
	t.Helper()
	cmd := startSleep(t)
	done := make(chan bool, 1)
	go func() { done <- wait(cmd.Process.Pid) }()
	// Still running: the wait has not returned. (A wait that returned at
	// once would have done so by the time the process is seen alive
	// twice, with a scheduling point between.)
	for range 2 {
		if s := procState(t, cmd.Process.Pid); s == "Z" {
			t.Fatalf("sleep 60 is already a zombie")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case exited := <-done:
		t.Fatalf("the wait returned %v while the process runs", exited)
	default:
	}
	cmd.Process.Kill()
	if !<-done {
		t.Fatal("the wait reported no exit after the process was killed")
	}
	if s := procState(t, cmd.Process.Pid); s != "Z" {
		t.Fatalf("after the wait the process is in state %q, want an unreaped zombie (Z)", s)
	}
}

// startSleep starts sleep 60, killed and reaped when the test ends.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// procState returns the state letter of process pid from /proc.
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) S ...: the state follows the last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return f[0]
}
