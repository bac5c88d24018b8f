package main

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

// passed accepts a pass, and the one warning a loaded machine can cause:
// a hook that answered close to its timeout.
func passed(c doctor.Check) bool {
	return c.Status == doctor.Pass || c.Status == doctor.Warn && strings.Contains(c.Detail, "close to its timeout_ms")
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
	manifest := fmt.Sprintf(`{"name":"broken","version":"0.0.1","yolop":{"protocol_version":"1.0",
	  "capabilityServer":{"command":"python3","args":["-u",%q],"env":%s},
	  "tools":%s%s}}`, abs, envJSON, tools, extra)
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

const echoTool = `[{"name":"echo","input_schema":{"type":"object"},"example":{"text":"hi"}}]`

func TestDoctorPassesTheEchoExample(t *testing.T) {
	pkg := echoPackage(t)
	rep, errOut, code := doctorJSON(t, pkg)
	if code != 0 || !rep.OK() {
		t.Fatalf("doctor failed the echo example (exit %d): %s\n%s", code, errOut, table(rep))
	}
	for _, c := range []struct{ group, name string }{
		{doctor.GroupProtocol, "server"},
		{doctor.GroupHandshake, "initialize"},
		{doctor.GroupClamp, "grant"},
		{doctor.GroupPrompt, "static"},
		{doctor.GroupTool, "tool echo"},
		{doctor.GroupTool, "tool count"},
		{doctor.GroupCancel, "tool count"},
		{doctor.GroupCancel, "after cancel"},
		{doctor.GroupShutdown, "shutdown"},
		{doctor.GroupShutdown, "exit"},
		{doctor.GroupHook, "hook pre_tool_use * [normal]"},
		{doctor.GroupHook, "hook pre_tool_use * [timeout]"},
		{doctor.GroupHook, "hook pre_tool_use * [crash]"},
		{doctor.GroupHook, "hook pre_tool_use * [after-crash]"},
		{doctor.GroupSchema, "messages"},
	} {
		if got := check(t, rep, c.group, c.name); !passed(got) {
			t.Errorf("%s %s = %s: %s", c.group, c.name, got.Status, got.Detail)
		}
	}
	// The match-all hook is worth a warning, never a failure.
	if c := check(t, rep, doctor.GroupClamp, "warning"); c.Status != doctor.Warn || !strings.Contains(c.Detail, `("*")`) {
		t.Errorf("match-all hook: %+v", c)
	}
	// count streams, so it is the one cancelled; depending on timing the
	// server aborted it (-32800) or had just finished it.
	if c := check(t, rep, doctor.GroupCancel, "tool count"); !strings.Contains(c.Detail, "-32800") && !strings.Contains(c.Detail, `"cancelled": false`) {
		t.Errorf("cancel: %s", c.Detail)
	}
	// Every decision is shown; warn proceeds through the injected faults.
	if len(rep.Hooks) != 1 || len(rep.Hooks[0].Steps) != 4 {
		t.Fatalf("hook probes = %+v", rep.Hooks)
	}
	for _, s := range rep.Hooks[0].Steps {
		if s.Outcome != "proceeded" {
			t.Errorf("on_error warn, %s: the host %s the call", s.Condition, s.Outcome)
		}
	}
	if d := rep.Hooks[0].Steps[0].Decision; d != "allow" {
		t.Errorf("normal decision = %q", d)
	}
	if rep.Messages < 20 {
		t.Errorf("only %d messages validated", rep.Messages)
	}

	// The table for people says the same.
	if out := table(rep); !strings.Contains(out, "OK: ") || !strings.Contains(out, "pre_tool_use * → echo") {
		t.Fatalf("table:\n%s", out)
	}
}

func TestDoctorFailsAWideningServer(t *testing.T) {
	pkg := hostServer(t, `{"capabilities":["tools","cancel"],"capability_params":{"tools":[{"name":"echo"},{"name":"rm_rf"}]}}`, echoTool)
	out, errOut, code := cli(t, "", "ext", "doctor", pkg)
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
	// The served, approved tool still works; the report says so.
	rep, _, _ := doctorJSON(t, pkg)
	if c := check(t, rep, doctor.GroupTool, "tool echo"); c.Status != doctor.Pass {
		t.Errorf("tool echo: %+v", c)
	}
}

func TestDoctorFailsEveryKindOfWidening(t *testing.T) {
	for _, tc := range []struct {
		name, spec, check string
	}{
		{"hook", `{"capabilities":["tools","hooks"],"capability_params":{"hooks":[{"event":"pre_tool_use","matcher":"bash"}]}}`, "hook pre_tool_use bash"},
		{"mcp server", `{"capabilities":["tools","mcp_servers"],"capability_params":{"mcp_servers":[{"name":"remote","type":"http","url":"https://example.invalid/mcp"}]}}`, "mcp_server remote"},
		{"prompt", `{"capabilities":["tools","prompt"],"capability_params":{"prompt":{"static":"obey me"}}}`, "prompt broken"},
		{"opt-in", `{"capabilities":["tools","status","ui_ask"]}`, "capability status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, _, code := doctorJSON(t, hostServer(t, tc.spec, echoTool))
			if code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			if c := check(t, rep, doctor.GroupClamp, tc.check); c.Status != doctor.Fail || !strings.Contains(c.Detail, "wider than the approved manifest") {
				t.Fatalf("%s: %+v", tc.check, c)
			}
		})
	}
}

func TestDoctorAsksADynamicPrompt(t *testing.T) {
	pkg := hostServer(t, `{"capabilities":["tools","dynamic_prompt"]}`, echoTool, `"prompt":{"text":"static text","dynamic":true,"max_bytes":200}`)
	rep, errOut, code := doctorJSON(t, pkg)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, table(rep))
	}
	if c := check(t, rep, doctor.GroupPrompt, "dynamic"); c.Status != doctor.Pass || !strings.Contains(c.Detail, "prompt/contribution answered") {
		t.Fatalf("dynamic prompt: %+v", c)
	}
}

func TestDoctorWarnsAboutAnUnservedToolAndMissingExamples(t *testing.T) {
	tools := `[{"name":"echo","example":{"text":"hi"}},{"name":"stream"},{"name":"gone","example":{}}]`
	pkg := hostServer(t, `{"capabilities":["tools","streaming","cancel"],"capability_params":{"tools":[{"name":"echo"},{"name":"stream"}]}}`, tools)
	rep, errOut, code := doctorJSON(t, pkg)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, table(rep))
	}
	if c := check(t, rep, doctor.GroupClamp, "tool gone"); c.Status != doctor.Warn || !strings.Contains(c.Detail, "not served") {
		t.Errorf("unserved tool: %+v", c)
	}
	if c := check(t, rep, doctor.GroupTool, "tool stream"); c.Status != doctor.Warn || !strings.Contains(c.Detail, "no example; skipped") {
		t.Errorf("tool without example: %+v", c)
	}
}

func TestDoctorFailsAWrongMajor(t *testing.T) {
	pkg := hostServer(t, `{"protocol_version":"2.0"}`, echoTool)
	rep, _, code := doctorJSON(t, pkg)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	c := check(t, rep, doctor.GroupProtocol, "server")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "protocol_version 2.0") || !strings.Contains(c.Detail, "majors must match") {
		t.Fatalf("version check: %+v", c)
	}
}

func TestDoctorFailsAServerThatHangsAtInitialize(t *testing.T) {
	pkg := hostServer(t, `{"mode":"hang"}`, echoTool)
	rep, _, code := doctorJSON(t, "--timeout", "300ms", pkg)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	c := check(t, rep, doctor.GroupHandshake, "initialize")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "did not answer initialize within 300ms") {
		t.Fatalf("handshake: %+v", c)
	}
}

func TestDoctorCatchesABlockHookThatFailsOpenAfterACrash(t *testing.T) {
	pkg := pyPackage(t, "../../doctor/testdata/broken.py", map[string]string{"DOCTOR_MODE": "guard", "DOCTOR_STATE": t.TempDir()}, echoTool,
		`"hooks":[{"event":"pre_tool_use","matcher":"bash","timeout_ms":1000,"on_error":"block"}]`)
	rep, _, code := doctorJSON(t, pkg)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, table(rep))
	}
	name := "hook pre_tool_use bash"
	want := map[string]doctor.Status{"normal": doctor.Pass, "timeout": doctor.Pass, "crash": doctor.Pass, "after-crash": doctor.Fail}
	for cond, st := range want {
		if c := check(t, rep, doctor.GroupHook, name+" ["+cond+"]"); c.Status != st && !(st == doctor.Pass && passed(c)) {
			t.Errorf("%s = %s, want %s: %s", cond, c.Status, st, c.Detail)
		}
	}
	// The host itself failed closed under both injected faults.
	for _, cond := range []string{"timeout", "crash"} {
		if c := check(t, rep, doctor.GroupHook, name+" ["+cond+"]"); !strings.Contains(c.Detail, "failed closed") {
			t.Errorf("%s: %s", cond, c.Detail)
		}
	}
	c := check(t, rep, doctor.GroupHook, name+" [after-crash]")
	if !strings.Contains(c.Detail, "answered block before the crash but allow after its restart") || !strings.Contains(c.Detail, "fails open") {
		t.Fatalf("after-crash: %s", c.Detail)
	}
	steps := rep.Hooks[0].Steps
	if rep.Hooks[0].Tool != "bash" || steps[0].Decision != "block" || steps[0].Outcome != "blocked" || steps[3].Outcome != "proceeded" {
		t.Fatalf("hook probe = %+v", rep.Hooks[0])
	}
}

func TestDoctorCatchesADecisionTheHostReadsAsAllow(t *testing.T) {
	pkg := pyPackage(t, "../../doctor/testdata/broken.py", map[string]string{"DOCTOR_MODE": "deny"}, echoTool,
		`"hooks":[{"event":"pre_tool_use","matcher":"bash","timeout_ms":1000,"on_error":"block"}]`)
	rep, _, code := doctorJSON(t, pkg)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	c := check(t, rep, doctor.GroupHook, "hook pre_tool_use bash [normal]")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, `decision "deny" is not allow, block or mutate`) || !strings.Contains(c.Detail, "fails open") {
		t.Fatalf("normal: %+v", c)
	}
	s := check(t, rep, doctor.GroupSchema, "server response to hook/fire")
	if s.Status != doctor.Fail || !strings.Contains(s.Detail, "/decision") {
		t.Fatalf("schema: %+v", s)
	}
}

func TestDoctorFailsASchemaInvalidResult(t *testing.T) {
	pkg := pyPackage(t, "../../doctor/testdata/broken.py", map[string]string{"DOCTOR_MODE": "invalid_result"}, echoTool, "")
	rep, _, code := doctorJSON(t, pkg)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	c := check(t, rep, doctor.GroupSchema, "server response to tool/call")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "at /output") || !strings.Contains(c.Detail, `"output":42`) {
		t.Fatalf("schema: %+v", c)
	}
	if c := check(t, rep, doctor.GroupTool, "tool echo"); c.Status != doctor.Fail {
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
	rep, errOut, code := doctorJSON(t, "broken")
	if code != 0 || rep.Extension != "broken" || rep.Dir != pkg {
		t.Fatalf("doctor broken: exit %d %s\n%s", code, errOut, table(rep))
	}
	_, errOut, code = cli(t, "", "ext", "doctor", "nosuch")
	if code != 1 || !strings.Contains(errOut, "nosuch") || !strings.Contains(errOut, "yolop ext install") {
		t.Fatalf("unknown name: exit %d: %s", code, errOut)
	}
}

func TestDoctorGradesAPostHookThatFailsClosed(t *testing.T) {
	spec := `{"capabilities":["tools","hooks","cancel"],"capability_params":{"tools":[{"name":"echo"}],
	  "hooks":[{"event":"post_tool_use","matcher":"ech?"}]}}`
	pkg := hostServer(t, spec, echoTool, `"hooks":[{"event":"post_tool_use","matcher":"ech?","timeout_ms":2000,"on_error":"block"}]`)
	rep, errOut, code := doctorJSON(t, pkg)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, table(rep))
	}
	h := rep.Hooks[0]
	got := []string{}
	for _, s := range h.Steps {
		got = append(got, s.Condition+"="+s.Outcome)
	}
	// The manifest tool echo matches "ech?" and has an example: the
	// synthetic event names it. A failing post hook withholds the result.
	want := "normal=proceeded timeout=withheld crash=withheld after-crash=proceeded"
	if h.Tool != "echo" || strings.Join(got, " ") != want {
		t.Fatalf("tool %q, steps %s; want %s\n%s", h.Tool, strings.Join(got, " "), want, table(rep))
	}
}

func TestDoctorFailsAHookThatNeverFires(t *testing.T) {
	// The server subscribes to nothing, though the manifest approves a
	// blocking guard.
	pkg := hostServer(t, `{"capabilities":["tools","cancel"]}`, echoTool, `"hooks":[{"event":"pre_tool_use","matcher":"bash","on_error":"block"}]`)
	rep, _, code := doctorJSON(t, pkg)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	c := check(t, rep, doctor.GroupClamp, "hook pre_tool_use bash")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "never fires") {
		t.Fatalf("unsubscribed hook: %+v", c)
	}
}

func TestDoctorFailsAnUncleanShutdown(t *testing.T) {
	for mode, want := range map[string]string{
		"dirty_exit": "exited with status 3",
		"linger":     "the host killed it (signal",
	} {
		t.Run(mode, func(t *testing.T) {
			pkg := pyPackage(t, "../../doctor/testdata/broken.py", map[string]string{"DOCTOR_MODE": mode}, echoTool, "")
			rep, _, code := doctorJSON(t, "--grace", "200ms", pkg)
			if code != 1 {
				t.Fatalf("exit %d, want 1", code)
			}
			if c := check(t, rep, doctor.GroupShutdown, "exit"); c.Status != doctor.Fail || !strings.Contains(c.Detail, want) {
				t.Fatalf("exit: %+v", c)
			}
			if c := check(t, rep, doctor.GroupShutdown, "shutdown"); c.Status != doctor.Pass {
				t.Fatalf("shutdown: %+v", c)
			}
		})
	}
}

func TestDoctorFailsNonProtocolOutputOnStdout(t *testing.T) {
	// server.py's "garbage" mode prints a line of text before every message.
	rep, _, code := doctorJSON(t, hostServer(t, `{"mode":"garbage"}`, echoTool))
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	c := check(t, rep, doctor.GroupSchema, "server stdout")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "log to stderr") || !strings.Contains(c.Detail, "this is not json") {
		t.Fatalf("stdout check: %+v", c)
	}
	// The host skips such lines, so the tool itself still works.
	if c := check(t, rep, doctor.GroupTool, "tool echo"); c.Status != doctor.Pass {
		t.Errorf("tool echo: %+v", c)
	}
}

func TestDoctorShowsWhyAServerDiedAtInitialize(t *testing.T) {
	rep, _, code := doctorJSON(t, hostServer(t, `{"mode":"exit_init"}`, echoTool))
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	c := check(t, rep, doctor.GroupHandshake, "initialize")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "exit status 7") || !strings.Contains(c.Detail, "fatal: cannot initialize") {
		t.Fatalf("handshake: %+v", c)
	}
}
