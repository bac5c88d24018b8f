package builtin

import (
	"strings"
	"testing"

	"yolop.dev/core/host"
)

// TestSkillsBeforeTheSession: before a session exists (or with none) the
// skills tools answer that there are none, and never fail as a protocol
// error; they declare no tool that writes.
func TestSkillsBeforeTheSession(t *testing.T) {
	for _, src := range []func() SkillSource{nil, func() SkillSource { return nil }} {
		s := host.NewSession(host.SessionOptions{Builtins: []host.Capability{NewSkills(src)}})
		if res := call(t, s, "list_skills", map[string]any{}); res.IsError || !strings.Contains(res.Output, "no skills") || string(res.Data) != "[]" {
			t.Errorf("list_skills = %+v", res)
		}
		if res := call(t, s, "read_skill", map[string]any{"name": "x"}); !res.IsError || !strings.Contains(res.Output, `no skill "x"`) {
			t.Errorf("read_skill = %+v", res)
		}
		if res := call(t, s, "read_skill", map[string]any{}); !res.IsError || !strings.Contains(res.Output, "needs") {
			t.Errorf("read_skill without a name = %+v", res)
		}
		s.Close()
	}
	var names []string
	for _, d := range NewSkills(nil).Tools() {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "list_skills,read_skill" {
		t.Errorf("tools = %v", names)
	}
}
