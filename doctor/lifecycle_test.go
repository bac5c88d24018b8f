package doctor_test

import (
	"strings"
	"testing"

	"yolop.dev/doctor"
)

// TestRunFiresEachDeclaredLifecycleEvent: doctor fires every declared
// lifecycle subscription synthetically through the host, answered normally
// and with its answer held back: a blocking event under on_error block
// fails closed on the timeout, the others go on.
func TestRunFiresEachDeclaredLifecycleEvent(t *testing.T) {
	hooks := `[{"event":"user_prompt_submit","matcher":"*","on_error":"block","timeout_ms":10000},{"event":"post_tool_use_failure","matcher":"ech?"}]`
	// core/host's hooks.py serves only hooks, answering allow, and exits
	// at once on exit.
	rep := runDoctor(t, pyPackage(t, "../core/host/testdata/hooks.py", map[string]string{"YEP_HOOKS_SPEC": "{}"}, "[]", `"hooks":`+hooks), doctor.Options{})
	mustPass(t, rep)
	want := map[string]string{
		"user_prompt_submit *":       "normal=proceeded timeout=blocked",
		"post_tool_use_failure ech?": "normal=proceeded timeout=proceeded",
	}
	if len(rep.Hooks) != len(want) {
		t.Fatalf("%d hook probes, want %d:\n%s", len(rep.Hooks), len(want), table(rep))
	}
	for _, h := range rep.Hooks {
		var got []string
		for _, s := range h.Steps {
			got = append(got, s.Condition+"="+s.Outcome)
		}
		if w := want[h.Event+" "+h.Matcher]; strings.Join(got, " ") != w {
			t.Errorf("%s %s: %s, want %s", h.Event, h.Matcher, strings.Join(got, " "), w)
		}
	}
	if h := rep.Hooks[1]; h.Tool == "" || h.Tool[:3] != "ech" {
		t.Errorf("post_tool_use_failure fired for %q, want a tool ech? selects", h.Tool)
	}
	c := check(t, rep, doctor.GroupHook, "hook user_prompt_submit * [timeout]")
	if c.Status != doctor.Pass || !strings.Contains(c.Detail, "failed closed") {
		t.Errorf("user_prompt_submit timeout: %+v", c)
	}
	c = check(t, rep, doctor.GroupHook, "hook post_tool_use_failure ech? [normal]")
	if c.Status != doctor.Pass || !strings.Contains(c.Detail, "a synthetic post_tool_use_failure fired it: the server answered allow") {
		t.Errorf("post_tool_use_failure normal: %+v", c)
	}
}
