package main

// These are end-to-end tests of the command: argument resolution, flags,
// output and exit status. What the doctor grades, and how, is tested in
// the doctor module (yolop.dev/doctor), against Run and RunGrant.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/doctor"
)

// doctorJSON runs `yolop ext doctor --json` and decodes the report.
func doctorJSON(t *testing.T, args ...string) (*doctor.Report, string, int) {
	t.Helper()
	out, errOut, code := cli(t, "", append([]string{"ext", "doctor", "--json"}, args...)...)
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json printed no report (%v); exit %d; stdout:\n%s\nstderr:\n%s", err, code, out, errOut)
	}
	return &rep, errOut, code
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

func table(rep *doctor.Report) string {
	var b strings.Builder
	_ = rep.WriteTable(&b)
	return b.String()
}

// pyPackage writes a package whose server is a Python script run with
// python3, declaring tools (JSON array) and extra yolop facet members.
func pyPackage(t *testing.T, script string, env map[string]string, tools, extra string) string {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	envJSON, _ := json.Marshal(env)
	if extra != "" {
		extra = "," + extra
	}
	// The script lives outside the package: its sandbox declares it, as a
	// package whose server reads a file elsewhere must.
	manifest := fmt.Sprintf(`{"name":"broken","version":"0.0.1","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"python3","args":["-u",%q],"env":%s},
	  "sandbox":{"fs":[{"path":"${workspace}","access":"rw"},{"path":%q}]},
	  "tools":%s%s}}`, abs, envJSON, abs, tools, extra)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostServer is core/host's configurable raw-protocol test server; spec is
// its YEP_TEST_SPEC.
func hostServer(t *testing.T, spec string, tools string, extra ...string) string {
	t.Helper()
	return pyPackage(t, "../../core/host/testdata/server.py", map[string]string{"YEP_TEST_SPEC": spec}, tools, strings.Join(extra, ","))
}

// slowMachine is the --timeout of these runs: only a broken server waits
// it out, and on a loaded machine starting python3 can take over 10s.
const slowMachine = "60s"

const echoTool = `[{"name":"echo","input_schema":{"type":"object"},"example":{"text":"hi"}}]`

func TestDoctorPassesTheEchoExampleByPath(t *testing.T) {
	pkg := echoPackage(t)
	// The flags reach the doctor: --hook-timeout shows in the timeout
	// probe's line. The other bounds are generous, so a slow machine does
	// not fail the run.
	out, errOut, code := cli(t, "", "ext", "doctor", "--timeout", slowMachine, "--grace", "5s", "--hook-timeout", "150ms", pkg)
	if code != 0 {
		t.Fatalf("doctor failed the echo example (exit %d): %s\n%s", code, errOut, out)
	}
	// The table for people: the header names the package, the hook table
	// its subscription, the tally says OK.
	for _, want := range []string{"doctor: extension echo 0.1.0 (" + pkg + ")", "the hook timed out after 150ms", "/echo:greet with no arguments", "pre_tool_use * → echo", "\nOK: "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestDoctorFailsAWideningServer(t *testing.T) {
	pkg := hostServer(t, `{"capabilities":["tools","cancel"],"capability_params":{"tools":[{"name":"echo"},{"name":"rm_rf"}]}}`, echoTool)
	out, errOut, code := cli(t, "", "ext", "doctor", "--timeout", slowMachine, pkg)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, out, errOut)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "FAIL") && strings.Contains(l, "rm_rf") {
			line = l
		}
	}
	if !strings.Contains(line, "clamp") || !strings.Contains(line, "not declared in the approved manifest") {
		t.Fatalf("no clear failure naming the widened tool:\n%s", out)
	}
	if !strings.Contains(errOut, "doctor: extension broken failed") {
		t.Fatalf("stderr = %q", errOut)
	}
	// --json prints the same report as one document, with the same exit
	// status; the served, approved tool still works and the report says so.
	rep, _, code := doctorJSON(t, "--timeout", slowMachine, pkg)
	if code != 1 || rep.OK() || rep.Failed == 0 {
		t.Fatalf("--json: exit %d, %d failed; want exit 1 and a failure", code, rep.Failed)
	}
	if c := check(t, rep, doctor.GroupTool, "tool echo"); c.Status != doctor.Pass {
		t.Errorf("tool echo: %+v", c)
	}
}

func TestDoctorResolvesAnInstalledExtensionByName(t *testing.T) {
	t.Setenv("YOLOP_CONFIG_DIR", t.TempDir())
	pkg := hostServer(t, `{}`, echoTool)
	for _, args := range [][]string{{"ext", "install", "--yes", pkg}, {"ext", "enable", "broken"}} {
		if out, errOut, code := cli(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	rep, errOut, code := doctorJSON(t, "--timeout", slowMachine, "broken")
	if code != 0 || rep.Extension != "broken" || rep.Dir != pkg {
		t.Fatalf("doctor broken: exit %d %s\n%s", code, errOut, table(rep))
	}
	_, errOut, code = cli(t, "", "ext", "doctor", "nosuch")
	if code != 1 || !strings.Contains(errOut, "nosuch") || !strings.Contains(errOut, "yolop ext install") {
		t.Fatalf("unknown name: exit %d: %s", code, errOut)
	}
}
