package doctor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"yolop.dev/doctor"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
)

// The tests in this file run real servers: core/host's raw-protocol
// Python server (server.py, configured by YEP_TEST_SPEC) and the
// deliberately broken ones in testdata/broken.py.

func TestRunFailsAWideningServer(t *testing.T) {
	pkg := hostServer(t, `{"capabilities":["tools","cancel"],"capability_params":{"tools":[{"name":"echo"},{"name":"rm_rf"}]}}`, echoTool)
	rep := runDoctor(t, pkg, doctor.Options{})
	mustFail(t, rep)
	if c := check(t, rep, doctor.GroupClamp, "tool rm_rf"); c.Status != doctor.Fail || !strings.Contains(c.Detail, "not declared in the approved manifest") {
		t.Fatalf("no clear failure naming the widened tool: %+v", c)
	}
	// The table for people names it on a FAIL line of the clamp group.
	line := ""
	for _, l := range strings.Split(table(rep), "\n") {
		if strings.Contains(l, "FAIL") && strings.Contains(l, "rm_rf") {
			line = l
		}
	}
	if !strings.Contains(line, "clamp") || !strings.Contains(line, "not declared in the approved manifest") {
		t.Fatalf("no clear failure naming the widened tool:\n%s", table(rep))
	}
	// The served, approved tool still works; the report says so.
	if c := check(t, rep, doctor.GroupTool, "tool echo"); c.Status != doctor.Pass {
		t.Errorf("tool echo: %+v", c)
	}
}

func TestRunFailsEveryKindOfWidening(t *testing.T) {
	for _, tc := range []struct {
		name, spec, check string
	}{
		{"hook", `{"capabilities":["tools","hooks"],"capability_params":{"hooks":[{"event":"pre_tool_use","matcher":"bash"}]}}`, "hook pre_tool_use bash"},
		{"mcp server", `{"capabilities":["tools","mcp_servers"],"capability_params":{"mcp_servers":[{"name":"remote","type":"http","url":"https://example.invalid/mcp"}]}}`, "mcp_server remote"},
		{"prompt", `{"capabilities":["tools","prompt"],"capability_params":{"prompt":{"static":"obey me"}}}`, "prompt broken"},
		{"opt-in", `{"capabilities":["tools","status","ui_ask"]}`, "capability status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runDoctor(t, hostServer(t, tc.spec, echoTool), doctor.Options{})
			mustFail(t, rep)
			if c := check(t, rep, doctor.GroupClamp, tc.check); c.Status != doctor.Fail || !strings.Contains(c.Detail, "wider than the approved manifest") {
				t.Fatalf("%s: %+v", tc.check, c)
			}
		})
	}
}

func TestRunAsksADynamicPrompt(t *testing.T) {
	pkg := hostServer(t, `{"capabilities":["tools","dynamic_prompt"]}`, echoTool, `"prompt":{"text":"static text","dynamic":true,"max_bytes":200}`)
	rep := runDoctor(t, pkg, doctor.Options{})
	mustPass(t, rep)
	if c := check(t, rep, doctor.GroupPrompt, "dynamic"); c.Status != doctor.Pass || !strings.Contains(c.Detail, "prompt/contribution answered") {
		t.Fatalf("dynamic prompt: %+v", c)
	}
}

func TestRunWarnsAboutAnUnservedToolAndMissingExamples(t *testing.T) {
	tools := `[{"name":"echo","example":{"text":"hi"}},{"name":"stream"},{"name":"gone","example":{}}]`
	pkg := hostServer(t, `{"capabilities":["tools","streaming","cancel"],"capability_params":{"tools":[{"name":"echo"},{"name":"stream"}]}}`, tools)
	rep := runDoctor(t, pkg, doctor.Options{})
	mustPass(t, rep)
	if c := check(t, rep, doctor.GroupClamp, "tool gone"); c.Status != doctor.Warn || !strings.Contains(c.Detail, "not served") {
		t.Errorf("unserved tool: %+v", c)
	}
	if c := check(t, rep, doctor.GroupTool, "tool stream"); c.Status != doctor.Warn || !strings.Contains(c.Detail, "no example; skipped") {
		t.Errorf("tool without example: %+v", c)
	}
}

func TestRunFailsAWrongMajor(t *testing.T) {
	rep := runDoctor(t, hostServer(t, `{"protocol_version":"2.0"}`, echoTool), doctor.Options{})
	mustFail(t, rep)
	c := check(t, rep, doctor.GroupProtocol, "server")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "protocol_version 2.0") || !strings.Contains(c.Detail, "majors must match") {
		t.Fatalf("version check: %+v", c)
	}
}

func TestRunFailsAServerThatHangsAtInitialize(t *testing.T) {
	// The server never answers, so the handshake times out however fast
	// the machine is; the bound only decides how long the test waits.
	rep := runDoctor(t, hostServer(t, `{"mode":"hang"}`, echoTool), doctor.Options{HandshakeTimeout: 2 * time.Second})
	mustFail(t, rep)
	c := check(t, rep, doctor.GroupHandshake, "initialize")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "did not answer initialize within 2s") {
		t.Fatalf("handshake: %+v", c)
	}
}

// guardHook is a blocking pre_tool_use guard on bash. Its timeout_ms is
// generous: the injected timeout is doctor's own (InjectedHookTimeout),
// so only the synthetic events answered normally ever wait on it.
const guardHook = `"hooks":[{"event":"pre_tool_use","matcher":"bash","timeout_ms":10000,"on_error":"block"}]`

func TestRunCatchesABlockHookThatFailsOpenAfterACrash(t *testing.T) {
	pkg := brokenServer(t, map[string]string{"DOCTOR_MODE": "guard", "DOCTOR_STATE": t.TempDir()}, echoTool, guardHook)
	rep := runDoctor(t, pkg, doctor.Options{})
	mustFail(t, rep)
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

func TestRunCatchesADecisionTheHostReadsAsAllow(t *testing.T) {
	pkg := brokenServer(t, map[string]string{"DOCTOR_MODE": "deny"}, echoTool, guardHook)
	rep := runDoctor(t, pkg, doctor.Options{})
	mustFail(t, rep)
	c := check(t, rep, doctor.GroupHook, "hook pre_tool_use bash [normal]")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, `decision "deny" is not allow, block or mutate`) || !strings.Contains(c.Detail, "fails open") {
		t.Fatalf("normal: %+v", c)
	}
	s := check(t, rep, doctor.GroupSchema, "server response to hook/fire")
	if s.Status != doctor.Fail || !strings.Contains(s.Detail, "/decision") {
		t.Fatalf("schema: %+v", s)
	}
}

func TestRunFailsASchemaInvalidResult(t *testing.T) {
	rep := runDoctor(t, brokenServer(t, map[string]string{"DOCTOR_MODE": "invalid_result"}, echoTool, ""), doctor.Options{})
	mustFail(t, rep)
	c := check(t, rep, doctor.GroupSchema, "server response to tool/call")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "at /output") || !strings.Contains(c.Detail, `"output":42`) {
		t.Fatalf("schema: %+v", c)
	}
	if c := check(t, rep, doctor.GroupTool, "tool echo"); c.Status != doctor.Fail {
		t.Errorf("tool echo: %+v", c)
	}
}

func TestRunGradesAPostHookThatFailsClosed(t *testing.T) {
	spec := `{"capabilities":["tools","hooks","cancel"],"capability_params":{"tools":[{"name":"echo"}],
	  "hooks":[{"event":"post_tool_use","matcher":"ech?"}]}}`
	pkg := hostServer(t, spec, echoTool, `"hooks":[{"event":"post_tool_use","matcher":"ech?","timeout_ms":10000,"on_error":"block"}]`)
	rep := runDoctor(t, pkg, doctor.Options{})
	mustPass(t, rep)
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

func TestRunFailsAHookThatNeverFires(t *testing.T) {
	// The server subscribes to nothing, though the manifest approves a
	// blocking guard.
	pkg := hostServer(t, `{"capabilities":["tools","cancel"]}`, echoTool, `"hooks":[{"event":"pre_tool_use","matcher":"bash","on_error":"block"}]`)
	rep := runDoctor(t, pkg, doctor.Options{})
	mustFail(t, rep)
	c := check(t, rep, doctor.GroupClamp, "hook pre_tool_use bash")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "never fires") {
		t.Fatalf("unsubscribed hook: %+v", c)
	}
}

func TestRunFailsAnUncleanShutdown(t *testing.T) {
	for mode, want := range map[string]string{
		"dirty_exit": "exited with status 3",
		"linger":     "the host killed it (signal",
	} {
		t.Run(mode, func(t *testing.T) {
			// A lingering server is killed after the grace however fast
			// it runs; the grace is also what the server gets to answer
			// shutdown, so it is not short.
			rep := runDoctor(t, brokenServer(t, map[string]string{"DOCTOR_MODE": mode}, echoTool, ""), doctor.Options{})
			mustFail(t, rep)
			if c := check(t, rep, doctor.GroupShutdown, "exit"); c.Status != doctor.Fail || !strings.Contains(c.Detail, want) {
				t.Fatalf("exit: %+v", c)
			}
			if c := check(t, rep, doctor.GroupShutdown, "shutdown"); c.Status != doctor.Pass {
				t.Fatalf("shutdown: %+v", c)
			}
		})
	}
}

func TestRunFailsNonProtocolOutputOnStdout(t *testing.T) {
	// server.py's "garbage" mode prints a line of text before every message.
	rep := runDoctor(t, hostServer(t, `{"mode":"garbage"}`, echoTool), doctor.Options{})
	mustFail(t, rep)
	c := check(t, rep, doctor.GroupSchema, "server stdout")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "log to stderr") || !strings.Contains(c.Detail, "this is not json") {
		t.Fatalf("stdout check: %+v", c)
	}
	// The host skips such lines, so the tool itself still works.
	if c := check(t, rep, doctor.GroupTool, "tool echo"); c.Status != doctor.Pass {
		t.Errorf("tool echo: %+v", c)
	}
}

func TestRunShowsWhyAServerDiedAtInitialize(t *testing.T) {
	rep := runDoctor(t, hostServer(t, `{"mode":"exit_init"}`, echoTool), doctor.Options{})
	mustFail(t, rep)
	c := check(t, rep, doctor.GroupHandshake, "initialize")
	if c.Status != doctor.Fail || !strings.Contains(c.Detail, "exit status 7") || !strings.Contains(c.Detail, "fatal: cannot initialize") {
		t.Fatalf("handshake: %+v", c)
	}
}

// initFile is what server.py records of its last initialize: the params
// the host sent and the environment the server ran with.
type initFile struct {
	Params struct {
		Config        json.RawMessage `json:"config"`
		SessionID     string          `json:"session_id"`
		WorkspaceRoot string          `json:"workspace_root"`
	} `json:"params"`
	Env map[string]string `json:"env"`
}

// jsonEqual reports whether got holds the same JSON value as want.
func jsonEqual(got json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && reflect.DeepEqual(a, b)
}

func readInit(t *testing.T, path string) initFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the server recorded no initialize: %v", err)
	}
	var f initFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

func TestRunGivesTheServerConfigEnvAndWorkspace(t *testing.T) {
	initPath := filepath.Join(t.TempDir(), "init.json")
	spec, _ := json.Marshal(map[string]any{"init_file": initPath})
	pkg := hostServer(t, string(spec), echoTool)
	ws := t.TempDir()
	rep := runDoctor(t, pkg, doctor.Options{
		Config:    json.RawMessage(`{"region":"eu"}`),
		Env:       map[string]string{"EXAMPLE_TOKEN": "s3cret"},
		Workspace: ws,
		SessionID: "ci-42",
	})
	mustPass(t, rep)
	f := readInit(t, initPath)
	if !jsonEqual(f.Params.Config, `{"region":"eu"}`) {
		t.Errorf("initialize.config = %s", f.Params.Config)
	}
	if f.Params.WorkspaceRoot != ws || f.Params.SessionID != "ci-42" {
		t.Errorf("initialize workspace_root %q, session_id %q", f.Params.WorkspaceRoot, f.Params.SessionID)
	}
	if f.Env["EXAMPLE_TOKEN"] != "s3cret" || f.Env["YEP_TEST_SPEC"] == "" {
		t.Errorf("the server's env lacks the extra variable or the manifest's own: %v", f.Env)
	}
}

func TestRunDefaultsToNoConfigAndTheWorkingDirectory(t *testing.T) {
	initPath := filepath.Join(t.TempDir(), "init.json")
	spec, _ := json.Marshal(map[string]any{"init_file": initPath})
	rep := runDoctor(t, hostServer(t, string(spec), echoTool), doctor.Options{})
	mustPass(t, rep)
	f := readInit(t, initPath)
	wd, _ := os.Getwd()
	if len(f.Params.Config) != 0 && string(f.Params.Config) != "null" {
		t.Errorf("initialize.config = %s, want none", f.Params.Config)
	}
	if f.Params.WorkspaceRoot != wd || f.Params.SessionID != "doctor" {
		t.Errorf("initialize workspace_root %q, session_id %q; want %q, \"doctor\"", f.Params.WorkspaceRoot, f.Params.SessionID, wd)
	}
}

func TestRunGrantRunsTheGrantItIsGiven(t *testing.T) {
	// A front-end resolves an installed extension's config and secrets
	// itself and passes the grant it built.
	initPath := filepath.Join(t.TempDir(), "init.json")
	spec, _ := json.Marshal(map[string]any{"init_file": initPath})
	pkg := hostServer(t, string(spec), echoTool)
	m, err := packaging.Load(pkg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	g.Config = json.RawMessage(`{"mode":"resolved"}`)
	g.Server.Env["RESOLVED_SECRET"] = "from the credential store"
	rep, err := doctor.RunGrant(t.Context(), m, g, withGenerousBounds(doctor.Options{Env: map[string]string{"EXTRA": "1"}}))
	if err != nil {
		t.Fatal(err)
	}
	mustPass(t, rep)
	if rep.Extension != "broken" || rep.Dir != m.Dir {
		t.Errorf("report names %q in %q; want broken in %q", rep.Extension, rep.Dir, m.Dir)
	}
	f := readInit(t, initPath)
	if !jsonEqual(f.Params.Config, `{"mode":"resolved"}`) {
		t.Errorf("initialize.config = %s", f.Params.Config)
	}
	if f.Env["RESOLVED_SECRET"] != "from the credential store" || f.Env["EXTRA"] != "1" {
		t.Errorf("the server's env lacks the grant's or the extra variables: %v", f.Env)
	}
}

func TestRunRefusesWhatItCannotRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		opts doctor.Options
		want string
	}{
		{"no manifest", func(t *testing.T) string { return t.TempDir() }, doctor.Options{}, "doctor "},
		{"no capability server", func(t *testing.T) string {
			return writeManifest(t, []byte(`{"name":"bare","version":"0.0.1","yolop":{"protocol_version":"1.0"}}`))
		}, doctor.Options{}, "declares no capabilityServer"},
		{"config not an object", func(t *testing.T) string { return hostServer(t, `{}`, echoTool) },
			doctor.Options{Config: json.RawMessage(`[1]`)}, "Options.Config must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := doctor.Run(t.Context(), tc.dir(t), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || rep != nil {
				t.Fatalf("Run = %v, %v; want an error with %q", rep, err, tc.want)
			}
		})
	}
}

// Run expands ${VAR} in the manifest's server env from the environment, as
// a session does, so the doctor runs what users run.
func TestRunExpandsVariablesInTheServerSpec(t *testing.T) {
	t.Setenv("DOCTOR_TEST_REGION", "eu-west")
	initPath := filepath.Join(t.TempDir(), "init.json")
	spec, _ := json.Marshal(map[string]any{"init_file": initPath})
	pkg := pyPackage(t, "../core/host/testdata/server.py", map[string]string{
		"YEP_TEST_SPEC": string(spec), "REGION": "${DOCTOR_TEST_REGION}", "UNSET": "${DOCTOR_TEST_UNSET_VAR}",
	}, echoTool, "")
	mustPass(t, runDoctor(t, pkg, doctor.Options{}))
	f := readInit(t, initPath)
	if f.Env["REGION"] != "eu-west" || f.Env["UNSET"] != "${DOCTOR_TEST_UNSET_VAR}" {
		t.Errorf("server env REGION=%q UNSET=%q; want the expanded value and the unset reference as written", f.Env["REGION"], f.Env["UNSET"])
	}
}
