package scaffold_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	. "yolop.dev/harness/scaffold" // the tests read as the package's own code

	"go.uber.org/goleak"

	"yolop.dev/doctor"
	"yolop.dev/harness"
	"yolop.dev/harness/manager"
	"yolop.dev/internal/launchertest"
)

func TestMain(m *testing.M) {
	done := launchertest.Use()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		done()
		os.Exit(code)
	}))
}

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

// installAndDoctor installs the package r wrote in place, in a new config
// directory, and runs the doctor on the installed extension. Every check
// must pass, except those allowed (nil: none); the report is returned
// for further checks and logged when the test failed.
func installAndDoctor(t *testing.T, r *Result, allowed func(doctor.Check) bool) *doctor.Report {
	t.Helper()
	h, err := harness.Open(t.Context(), harness.Options{ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Manager().Install(t.Context(), manager.InstallRequest{Source: r.Dir, Consent: accept}); err != nil {
		t.Fatalf("install %s: %v", r.Dir, err)
	}
	m, g, err := h.InstalledGrant(t.Context(), r.Name)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := doctor.RunGrant(t.Context(), m, g, doctorOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range rep.Checks {
		if ch.Status != doctor.Pass && (allowed == nil || !allowed(ch)) {
			t.Errorf("doctor %s: %s %s %s: %s", r.Dir, ch.Status, ch.Group, ch.Name, ch.Detail)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b bytes.Buffer
			rep.WriteTable(&b)
			t.Logf("doctor report:\n%s", b.String())
		}
	})
	return rep
}

// needTSC returns the pinned tsc and the directory of Node.js's types
// (.ci/run runs npm ci in tscDir).
func needTSC(t *testing.T) (tsc, types string) {
	t.Helper()
	tsc, err := filepath.Abs(filepath.Join(tscDir, "node_modules", ".bin", "tsc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tsc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no tsc in %s; .ci/run runs npm ci there", tscDir)
		}
		t.Skipf("no tsc: run npm ci --prefix harness/scaffold/%s", tscDir)
	}
	need(t, "node", "apt-get install nodejs")
	types, _ = filepath.Abs(filepath.Join(tscDir, "node_modules", "@types"))
	return tsc, types
}
