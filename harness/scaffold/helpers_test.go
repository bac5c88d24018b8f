package scaffold_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	. "yolop.dev/harness/scaffold" // the tests read as the package's own code

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// debianRegistry is where Debian's librust-*-dev packages put crate
// sources; .ci/run installs librust-serde-json-dev so the Rust template
// builds without crates.io.
const debianRegistry = "/usr/share/cargo/registry"

// need returns the path of a command the tests drive for real. Missing, it
// skips the test, except under CI=true, where .ci/run installs it and its
// absence is a failure.
func need(t testing.TB, cmd, install string) string {
	t.Helper()
	p, err := exec.LookPath(cmd)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is needed and not on PATH; .ci/run installs it (%s)", cmd, install)
	}
	t.Skipf("%s is not on PATH (%s)", cmd, install)
	return ""
}

// needCargoRegistry returns a directory of crate sources holding
// serde_json, for building the Rust template offline. The toolchain here
// cannot reach crates.io, so without Debian's packaged sources the Rust
// build cannot run: the test is skipped, and fails under CI=true.
func needCargoRegistry(t testing.TB) string {
	t.Helper()
	need(t, "cargo", "a Rust toolchain: apt-get install cargo, or rustup")
	m, _ := filepath.Glob(filepath.Join(debianRegistry, "serde_json-*"))
	if len(m) > 0 {
		return debianRegistry
	}
	msg := "the Rust template needs serde_json; this machine cannot reach crates.io and " + debianRegistry +
		" has no serde_json (apt-get install librust-serde-json-dev, as .ci/run does)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// needLang checks the tools a language's package needs to build and run.
// It returns the options that make the build work offline here.
func needLang(t testing.TB, lang string) Options {
	t.Helper()
	switch lang {
	case Python:
		need(t, "python3", "apt-get install python3")
	case TypeScript:
		need(t, "node", "apt-get install nodejs")
	case Go:
		need(t, "go", "the Go toolchain")
		core, err := filepath.Abs("../../core")
		if err != nil {
			t.Fatal(err)
		}
		return Options{CoreDir: core}
	case Rust:
		return Options{CargoRegistry: needCargoRegistry(t)}
	}
	return Options{}
}
