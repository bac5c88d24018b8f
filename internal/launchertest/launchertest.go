// Package launchertest starts a test binary's confined servers through the
// small sandbox launcher instead of the test binary itself.
//
// Every server a test starts under a sandbox goes through a launcher, by
// default the running binary re-executed. A test binary built with -race
// that links the harness runs hundreds of milliseconds of package
// initialisation before the launcher's code, on every start; the small
// launcher, yolop-sandbox, runs almost none. The rules it applies are the
// same (the confine package's own tests and one end-to-end test of the
// yolop binary keep the default path covered).
package launchertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// pkg is the small launcher's import path.
const pkg = "yolop.dev/transport/stdio/confine/cmd/yolop-sandbox"

// env is confine.LauncherEnv (not imported: this module depends on the
// standard library, hclog and x/time only).
const env = "YOLOP_SANDBOX_LAUNCHER"

// Use builds yolop-sandbox into a temporary directory and points
// $YOLOP_SANDBOX_LAUNCHER at it, for this process and every process it
// starts. Call it from TestMain, after any branch where the test binary
// plays a server, and call the cleanup it returns once the tests have run.
// When the build fails it says so on stderr and changes nothing: the
// servers then start through the test binary, slower but confined alike.
func Use() (cleanup func()) {
	if os.Getenv(env) != "" {
		return func() {}
	}
	dir, err := os.MkdirTemp("", "yolop-sandbox-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "launchertest:", err)
		return func() {}
	}
	bin := filepath.Join(dir, "yolop-sandbox")
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "launchertest: build %s: %v\n%s", pkg, err, out)
		os.RemoveAll(dir)
		return func() {}
	}
	os.Setenv(env, bin)
	return func() {
		os.Unsetenv(env)
		os.RemoveAll(dir)
	}
}
