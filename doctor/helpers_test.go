package doctor_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"yolop.dev/doctor"
	"yolop.dev/packaging"
)

// generous bounds the waits of the tests' doctor runs that are not about
// a timeout: only a broken server ever reaches it, so a loaded machine
// (where starting python3 has been seen to take over 10s) never fails a
// test by being slow.
const generous = 60 * time.Second

// runDoctor runs the doctor over the package in dir, with generous
// bounds unless opts sets them. The grace is shorter: a server that
// lingers after exit waits all of it.
func runDoctor(t *testing.T, dir string, opts doctor.Options) *doctor.Report {
	t.Helper()
	opts = withGenerousBounds(opts)
	rep, err := doctor.Run(t.Context(), dir, opts)
	if err != nil {
		t.Fatalf("doctor.Run(%s): %v", dir, err)
	}
	return rep
}

// withGenerousBounds sets the bounds opts leaves at zero generously.
func withGenerousBounds(opts doctor.Options) doctor.Options {
	for _, b := range []*time.Duration{&opts.HandshakeTimeout, &opts.CallTimeout, &opts.PromptTimeout} {
		if *b == 0 {
			*b = generous
		}
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 5 * time.Second
	}
	return opts
}

// check returns the check named name in group, failing the test when the
// report has none.
func check(t *testing.T, rep *doctor.Report, group, name string) doctor.Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Group == group && c.Name == name {
			return c
		}
	}
	t.Fatalf("the report has no %s check %q:\n%s", group, name, table(rep))
	return doctor.Check{}
}

// passed accepts a pass, and the one warning a loaded machine can cause:
// a hook that answered close to its timeout.
func passed(c doctor.Check) bool {
	return c.Status == doctor.Pass || c.Status == doctor.Warn && strings.Contains(c.Detail, "close to its timeout_ms")
}

// mustFail fails the test unless the report has a failed check.
func mustFail(t *testing.T, rep *doctor.Report) {
	t.Helper()
	if rep.OK() || rep.Failed == 0 {
		t.Fatalf("the report has no failed check:\n%s", table(rep))
	}
}

// mustPass fails the test when the report has a failed check.
func mustPass(t *testing.T, rep *doctor.Report) {
	t.Helper()
	if !rep.OK() {
		t.Fatalf("the report has %d failed checks:\n%s", rep.Failed, table(rep))
	}
}

func table(rep *doctor.Report) string {
	var b strings.Builder
	_ = rep.WriteTable(&b)
	return b.String()
}

// writeManifest writes plugin.json into a new package directory.
func writeManifest(t *testing.T, manifest []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pyPackage writes a package whose server is a Python script run with
// python3, declaring tools (JSON array) and extra yolop facet members.
func pyPackage(t *testing.T, script string, env map[string]string, tools, extra string) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("the raw-protocol test servers need python3 on PATH: %v", err)
	}
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	envJSON, _ := json.Marshal(env)
	if extra != "" {
		extra = "," + extra
	}
	// The script lives outside the package and writes what it saw into
	// the test's temporary directories: its sandbox says so.
	scratch := filepath.Dir(t.TempDir())
	manifest := fmt.Sprintf(`{"name":"broken","version":"0.0.1","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"python3","args":["-u",%q],"env":%s},
	  "sandbox":{"fs":[{"path":"${workspace}","access":"rw"},{"path":%q},{"path":%q,"access":"rw"}]},
	  "tools":%s%s}}`, abs, envJSON, abs, scratch, tools, extra)
	return writeManifest(t, []byte(manifest))
}

// hostServer is core/host's configurable raw-protocol test server; spec is
// its YEP_TEST_SPEC.
func hostServer(t *testing.T, spec string, tools string, extra ...string) string {
	t.Helper()
	return pyPackage(t, "../core/host/testdata/server.py", map[string]string{"YEP_TEST_SPEC": spec}, tools, strings.Join(extra, ","))
}

// brokenServer is testdata/broken.py in the given DOCTOR_MODE.
func brokenServer(t *testing.T, env map[string]string, tools, extra string) string {
	t.Helper()
	return pyPackage(t, "testdata/broken.py", env, tools, extra)
}

const echoTool = `[{"name":"echo","input_schema":{"type":"object"},"example":{"text":"hi"}}]`

// echoManifest is the echo example's plugin.json.
const echoManifest = "../core/examples/echo/plugin.json"

// sdkPackage writes a package with the echo example's manifest whose
// server is this test binary serving the SDK server named server (see
// TestMain).
func sdkPackage(t *testing.T, server string) string {
	t.Helper()
	raw, err := os.ReadFile(echoManifest)
	if err != nil {
		t.Fatal(err)
	}
	return sdkPackageWith(t, server, raw)
}

// sdkPackageWith writes a package with the given manifest whose server is
// this test binary serving the SDK server named server (see TestMain).
func sdkPackageWith(t *testing.T, server string, manifest []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	// A manifest names a command inside the package (or on PATH), so
	// bin/ holds a wrapper that runs this test binary.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m["yolop"].(map[string]any)["capabilityServer"] = map[string]any{"command": "doctor-test-server", "env": map[string]string{serverEnv: server}}
	// The wrapper runs another program (this test binary): the sandbox
	// must say so, as any server that runs programs must.
	if _, ok := m["yolop"].(map[string]any)["sandbox"]; !ok {
		m["yolop"].(map[string]any)["sandbox"] = map[string]any{"exec": true,
			"fs": []map[string]string{{"path": "${workspace}", "access": "rw"}, {"path": exe, "access": "ro"}}}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	dir := writeManifest(t, out)
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nexec '" + exe + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "doctor-test-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// built is the echo example's package, built once per test binary and
// removed by TestMain.
var built struct {
	once sync.Once
	root string
	dir  string
	err  error
}

// echoPackage returns a package directory holding the echo example's
// plugin.json and its server, built into bin/ by go build from
// core/examples/echo: the example as its author ships it. The package is
// built on first use and shared; nothing writes to it.
func echoPackage() (string, error) {
	built.once.Do(func() {
		built.dir, built.err = buildEcho()
	})
	return built.dir, built.err
}

func buildEcho() (string, error) {
	root, err := os.MkdirTemp("", "doctor-echo-")
	if err != nil {
		return "", fmt.Errorf("building the echo example: %w", err)
	}
	built.root = root
	raw, err := os.ReadFile(echoManifest)
	if err != nil {
		return "", fmt.Errorf("building the echo example: %w", err)
	}
	if err := os.WriteFile(filepath.Join(root, "plugin.json"), raw, 0o644); err != nil {
		return "", fmt.Errorf("building the echo example: %w", err)
	}
	m, err := packaging.Load(root)
	if err != nil {
		return "", fmt.Errorf("building the echo example: %w", err)
	}
	bin := filepath.Join(root, "bin", m.Yolop.CapabilityServer.Command)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Dir(echoManifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -o %s ./core/examples/echo: %w\n%s", bin, err, out)
	}
	return root, nil
}

// echoPackageT is echoPackage for a test.
func echoPackageT(t *testing.T) string {
	t.Helper()
	dir, err := echoPackage()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// removeBuilt removes what echoPackage built.
func removeBuilt() {
	if built.root != "" {
		_ = os.RemoveAll(built.root)
	}
}
