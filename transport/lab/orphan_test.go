//go:build linux

package lab_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"yolop.dev/transport/lab"
)

// TestServersDieWithTheLab kills a lab (a re-executed test binary that
// started one side's server) with SIGKILL, as a closed pipe or a second
// Ctrl-C can, and waits for the server to go: no `yolop serve-lab`
// process may be left behind, reparented to init.
func TestServersDieWithTheLab(t *testing.T) {
	for _, side := range []string{lab.Floor, lab.GoPluginGRPC, lab.Stdio, lab.GoPlugin, lab.Bare, lab.GoPluginNetRPC, lab.MCPSDK} {
		t.Run(side, func(t *testing.T) {
			cmd := exec.Command(exe(t))
			cmd.Env = append(os.Environ(), startSideEnv+"="+side)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the lab printed no server pid: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			if serverGone(pid) {
				t.Fatalf("server %d is not running before the lab is killed", pid)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()

			// Poll until the server is gone; the guard only turns a hang
			// into a failure.
			guard := time.NewTimer(time.Minute)
			defer guard.Stop()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for !serverGone(pid) {
				select {
				case <-tick.C:
				case <-guard.C:
					t.Fatalf("the %s server (pid %d) outlived the lab killed with SIGKILL", side, pid)
				}
			}
		})
	}
}

// serverGone reports whether pid no longer runs: absent, or a zombie
// (reparented to init, which reaps it).
func serverGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}
