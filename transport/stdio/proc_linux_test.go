//go:build linux

package stdio

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPollExitedLeavesAZombie checks the poller's wait for a server's
// exit: it returns only once the process has exited, reports that it
// waited on a pidfd (this kernel has them), and leaves the process
// unreaped, so its group id cannot be reused before the group is killed.
func TestPollExitedLeavesAZombie(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	type result struct{ exited, ok bool }
	done := make(chan result, 1)
	go func() {
		exited, ok := pollExited(cmd.Process.Pid)
		done <- result{exited, ok}
	}()
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
	case r := <-done:
		t.Fatalf("pollExited returned %+v while the process runs", r)
	default:
	}
	cmd.Process.Kill()
	r := <-done
	if !r.ok {
		t.Skip("this kernel has no non-blocking pidfds; the waitid path is used")
	}
	if !r.exited {
		t.Fatal("pollExited reported no exit after the process was killed")
	}
	if s := procState(t, cmd.Process.Pid); s != "Z" {
		t.Fatalf("after pollExited the process is in state %q, want an unreaped zombie (Z)", s)
	}
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
