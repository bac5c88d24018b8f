package doctor_test

import (
	"os"
	"strings"
	"testing"

	"yolop.dev/doctor"
	"yolop.dev/transport/stdio/confine"
)

// doctor probes a native server's sandbox: what the machine enforces, then
// a forbidden read, write, connect and exec and each declared access, each
// as a check; where Landlock enforces the rules in full they all pass.
func TestRunProbesTheSandbox(t *testing.T) {
	rep := runDoctor(t, echoPackageT(t), doctor.Options{})
	var kinds []string
	var status, launcher *doctor.Check
	for i, c := range rep.Checks {
		if c.Group != doctor.GroupSandbox {
			continue
		}
		switch c.Name {
		case "status":
			status = &rep.Checks[i]
			continue
		case "launcher":
			launcher = &rep.Checks[i]
			continue
		}
		kinds = append(kinds, c.Name)
		if confine.KernelABI() >= 4 && !passed(c) {
			t.Errorf("probe %s = %s: %s", c.Name, c.Status, c.Detail)
		}
	}
	if status == nil || !strings.Contains(status.Detail, "rules from the default") {
		t.Fatalf("no sandbox status check:\n%+v", rep.Checks)
	}
	// The launcher this test binary's servers start through: the small
	// one launchertest built, else the test binary itself.
	want := os.Getenv(confine.LauncherEnv)
	if want == "" {
		want = "this binary"
	}
	if launcher == nil || !strings.Contains(launcher.Detail, want) {
		t.Fatalf("the launcher check does not name %q: %+v", want, launcher)
	}
	for _, c := range rep.Checks {
		if c.Group == doctor.GroupSandbox {
			t.Logf("%s %s %s", c.Name, c.Status, c.Detail)
		}
	}
	for _, k := range []string{"read", "write", "connect", "exec"} {
		if !strings.Contains(strings.Join(kinds, " "), k) {
			t.Errorf("no %s probe among %v", k, kinds)
		}
	}
}
