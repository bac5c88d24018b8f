package doctor_test

import (
	"strings"
	"testing"

	"yolop.dev/doctor"
)

// facetsManifest declares every facet the "facets" test server (see
// TestMain) serves.
const facetsManifest = `{"name":"facets","version":"0.0.1","yolop":{"protocol_version":"1.0",
  "capabilityServer":{"command":"unused"},
  "tools":[{"name":"pick","input_schema":{"type":"object"},"example":{}}],
  "commands":[{"name":"hello","description":"Say hello","example":"doctor"}],
  "config_schema":{"type":"object","properties":{"greeting":{"type":"string"}}},
  "status":true,"ui_ask":true}}`

// TestRunDrivesEveryFacetOfAGoodServer runs an SDK-built server that
// declares a command, config, ui_ask and status: each facet is driven
// once and passes.
func TestRunDrivesEveryFacetOfAGoodServer(t *testing.T) {
	rep := runDoctor(t, sdkPackageWith(t, "facets", []byte(facetsManifest)), doctor.Options{})
	mustPass(t, rep)
	for _, c := range []struct{ group, name, detail string }{
		{doctor.GroupCommand, "command hello", `with the example "doctor" → "hello, doctor"`},
		{doctor.GroupConfig, "config/changed", "answered ok"},
		{doctor.GroupUIAsk, "ui/ask", `"Which colour?"`},
		{doctor.GroupUIAsk, "ui/ask", `answered "red"`},
		{doctor.GroupStatus, "status/changed", `"picked red"`},
	} {
		if got := check(t, rep, c.group, c.name); got.Status != doctor.Pass || !strings.Contains(got.Detail, c.detail) {
			t.Errorf("%s %s = %s: %s; want a pass saying %s", c.group, c.name, got.Status, got.Detail, c.detail)
		}
	}
}

// TestRunFailsABrokenFacet runs testdata/broken.py broken in one facet
// at a time: each gets a failed check of its own that says why.
func TestRunFailsABrokenFacet(t *testing.T) {
	for _, tc := range []struct {
		mode, extra, group, name string
		want                     []string
	}{
		{"command_error", `"commands":[{"name":"go"}]`, doctor.GroupCommand, "command go",
			[]string{"with no arguments", "broken on purpose"}},
		{"command_shape", `"commands":[{"name":"go"}]`, doctor.GroupCommand, "command go",
			[]string{"schema/yep/v1/schema.json", "at /success"}},
		{"config_bad", `"config_schema":{"type":"object"}`, doctor.GroupConfig, "config/changed",
			[]string{`"maybe"`, "at /status", `"restart-required"`}},
		{"ask_bad", `"ui_ask":true`, doctor.GroupUIAsk, "ui/ask",
			[]string{"schema/yep/v1/schema.json", "at /prompt"}},
		{"ask_undeclared", `"ui_ask":true`, doctor.GroupUIAsk, "ui/ask",
			[]string{"refused", "did not declare ui_ask", "initialize"}},
		{"status_bad", `"status":true`, doctor.GroupStatus, "status/changed",
			[]string{"schema/yep/v1/schema.json", "at /text"}},
		{"status_undeclared", `"status":true`, doctor.GroupStatus, "status/changed",
			[]string{"drops", "initialize"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			rep := runDoctor(t, brokenServer(t, map[string]string{"DOCTOR_MODE": tc.mode}, echoTool, tc.extra), doctor.Options{})
			mustFail(t, rep)
			c := check(t, rep, tc.group, tc.name)
			if c.Status != doctor.Fail {
				t.Fatalf("%s %s = %s: %s; want a failure", tc.group, tc.name, c.Status, c.Detail)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Detail, w) {
					t.Errorf("%s %s: %q does not say %q", tc.group, tc.name, c.Detail, w)
				}
			}
		})
	}
}

// TestRunPushesTheConfigBack covers the two ways a good server takes a
// changed config besides answering ok: asking for a restart, and not
// declaring config at all (the host restarts it).
func TestRunPushesTheConfigBack(t *testing.T) {
	const schema = `"config_schema":{"type":"object"}`
	for name, tc := range map[string]struct {
		pkg  func(t *testing.T) string
		want string
	}{
		"restart-required": {
			func(t *testing.T) string {
				return brokenServer(t, map[string]string{"DOCTOR_MODE": "config_restart"}, echoTool, schema)
			},
			"answered restart-required and the host restarted it",
		},
		"no config capability": {
			func(t *testing.T) string {
				return hostServer(t, `{"capabilities":["tools","cancel"]}`, echoTool, schema)
			},
			"does not declare config: the host restarted it",
		},
	} {
		t.Run(name, func(t *testing.T) {
			rep := runDoctor(t, tc.pkg(t), doctor.Options{Config: []byte(`{"greeting":"hi"}`)})
			mustPass(t, rep)
			c := check(t, rep, doctor.GroupConfig, "config/changed")
			if c.Status != doctor.Pass || !strings.Contains(c.Detail, tc.want) || !strings.Contains(c.Detail, "greeting") {
				t.Fatalf("config/changed = %s: %s; want a pass saying %s", c.Status, c.Detail, tc.want)
			}
			// The restarted server is the one the later checks talk to.
			if c := check(t, rep, doctor.GroupShutdown, "exit"); c.Status != doctor.Pass {
				t.Errorf("shutdown exit after the restart: %+v", c)
			}
		})
	}
}
