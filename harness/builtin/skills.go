package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// SkillsName is the capability ref of [Skills].
const SkillsName = "builtin:skills"

// A SkillSource lists and reads a session's skills; *host.Session is one.
type SkillSource interface {
	Skills() []host.SkillInfo
	ReadSkill(name string) (host.SkillInfo, string, error)
}

// Skills is the built-in `skills` capability: tools list_skills and
// read_skill over the skills the session's enabled extensions contribute.
// There is no way to write through it: it only ever reads, by skill name
// (never a path), what [host.Session.ReadSkill] allows.
type Skills struct {
	host.Base
	src func() SkillSource
}

// NewSkills returns the capability over the source src returns (nil: no
// skills yet, as before the session exists).
func NewSkills(src func() SkillSource) *Skills { return &Skills{src: src} }

// Name implements [host.Capability].
func (*Skills) Name() string { return SkillsName }

var skillNameSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the skill name as list_skills shows it, or <extension>:<name> when two extensions ship the same name"}},"required":["name"],"additionalProperties":false}`)

// Tools implements [host.Capability].
func (*Skills) Tools() []host.ToolDef {
	return []host.ToolDef{
		{Name: "list_skills", InputSchema: emptySchema, NeverDefer: true, Risk: "low",
			Description: "List the skills the enabled extensions contribute: name, description and extension. Read one with read_skill before doing what it describes."},
		{Name: "read_skill", InputSchema: skillNameSchema, NeverDefer: true, Risk: "low",
			Description: "Read a contributed skill's SKILL.md (read-only)."},
	}
}

// CallTool implements [host.Capability].
func (s *Skills) CallTool(_ context.Context, call host.ToolCall, _ func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	var src SkillSource
	if s.src != nil {
		src = s.src()
	}
	switch call.Name {
	case "list_skills":
		var list []host.SkillInfo
		if src != nil {
			list = src.Skills()
		}
		type item struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Extension   string `json:"extension"`
		}
		items := []item{}
		var b strings.Builder
		for _, sk := range list {
			items = append(items, item{sk.Name, sk.Description, sk.Extension})
			fmt.Fprintf(&b, "%s (%s): %s\n", sk.Name, sk.Extension, sk.Description)
		}
		if len(list) == 0 {
			b.WriteString("no skills: no enabled extension contributes one")
		}
		data, _ := json.Marshal(items)
		return yep.ToolResult{Output: b.String(), Data: data}, nil
	case "read_skill":
		var args struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(call.Args, &args); err != nil || strings.TrimSpace(args.Name) == "" {
			return toolErr(fmt.Errorf("read_skill needs {\"name\": \"<skill>\"}")), nil
		}
		if src == nil {
			return toolErr(fmt.Errorf("no skill %q: this session has none", args.Name)), nil
		}
		sk, text, err := src.ReadSkill(args.Name)
		if err != nil {
			return toolErr(fmt.Errorf("%w; list_skills lists them", err)), nil
		}
		data, _ := json.Marshal(map[string]string{"name": sk.Name, "extension": sk.Extension, "description": sk.Description})
		return yep.ToolResult{Output: text, Data: data}, nil
	}
	return yep.ToolResult{}, fmt.Errorf("%w: builtin:skills has no tool %q", yep.ErrMethodNotFound, call.Name)
}
