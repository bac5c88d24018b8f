package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/core"
)

// TestLauncherBesideTheHost: yolop-sandbox beside the host's executable is
// the launcher when it is an executable file; otherwise the host is.
func TestLauncherBesideTheHost(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "yolop")
	small := filepath.Join(dir, SmallLauncher)
	if got := besideOrSelf(exe); got != exe {
		t.Fatalf("with no %s beside it: %s, want the host %s", SmallLauncher, got, exe)
	}
	if err := os.WriteFile(small, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := besideOrSelf(exe); got != exe {
		t.Fatalf("with a %s that is not executable: %s, want the host", SmallLauncher, got)
	}
	if err := os.Chmod(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := besideOrSelf(exe); got != small {
		t.Fatalf("with an executable %s beside it: %s, want it", SmallLauncher, got)
	}
}

// TestLauncherEnv: $YOLOP_SANDBOX_LAUNCHER names the launcher when none is
// given, must be absolute, and an explicit launcher wins over it.
func TestLauncherEnv(t *testing.T) {
	t.Setenv(LauncherEnv, "/opt/yolop/yolop-sandbox")
	if got, err := LauncherPath(""); err != nil || got != "/opt/yolop/yolop-sandbox" {
		t.Fatalf("LauncherPath with %s set = %q, %v", LauncherEnv, got, err)
	}
	if got, _ := LauncherPath("/usr/bin/host"); got != "/usr/bin/host" {
		t.Fatalf("an explicit launcher lost to the environment: %q", got)
	}
	if note, err := LauncherNote(); err != nil || !strings.Contains(note, "through /opt/yolop/yolop-sandbox") {
		t.Fatalf("LauncherNote with %s set = %q, %v", LauncherEnv, note, err)
	}
	t.Setenv(LauncherEnv, "")
	if note, err := LauncherNote(); err != nil || !strings.Contains(note, "through this binary") || !strings.Contains(note, SmallLauncher+" beside it") {
		t.Fatalf("LauncherNote for the host as its own launcher = %q, %v", note, err)
	}
	t.Setenv(LauncherEnv, "yolop-sandbox")
	if _, err := LauncherPath(""); err == nil || !strings.Contains(err.Error(), "absolute") || !strings.Contains(err.Error(), LauncherEnv) {
		t.Fatalf("a relative %s: %v, want an error naming it", LauncherEnv, err)
	}
}

// TestLauncherOfAnotherFormatRefuses: a launcher handed a plan of another
// format (one built from other source than the host) refuses it, says
// why, and never runs the program.
func TestLauncherOfAnotherFormatRefuses(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	p := buildPlan(&core.Confinement{}, "/bin/sh", []string{"sh", "-c", "echo > " + marker}, os.Getenv("PATH"), "")
	p.Format = planFormat + 1
	lc, err := Launch{}.command(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lc.Path)
	cmd.Args, cmd.Env, cmd.ExtraFiles = lc.Args, lc.Env, lc.ExtraFiles
	if err := cmd.Start(); err != nil {
		lc.Close()
		t.Fatal(err)
	}
	serr := lc.Started()
	cmd.Wait()
	if serr == nil || !strings.Contains(serr.Error(), "another version of yolop") {
		t.Fatalf("Started() = %v, want the plan format refused", serr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the program ran although the launcher refused the plan")
	}
}
