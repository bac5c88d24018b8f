package goplugin_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"yolop.dev/core"
	"yolop.dev/transport/stdio/confine"
)

// TestSandboxedPlugin: a go-plugin server with a sandbox starts through
// the launcher (it runs with no_new_privs, which only the launcher sets),
// completes the handshake over its socket in the private temp directory,
// and stops cleanly.
func TestSandboxedPlugin(t *testing.T) {
	if confine.KernelABI() < 1 {
		t.Skip("the kernel has no Landlock: nothing to confine")
	}
	s := spec("sandboxed", "conf", "echo")
	s.Sandbox = &core.Confinement{}
	inst := start(t, newTransport(nil), s)
	status, err := os.ReadFile("/proc/" + strconv.Itoa(inst.PID()) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "NoNewPrivs:\t1") {
		t.Errorf("the plugin runs without no_new_privs, so not through the sandbox launcher:\n%s", status)
	}
	if err := inst.Stop(hangGuard); err != nil {
		t.Fatalf("Stop = %v, want a clean exit", err)
	}
}
