package harness

import (
	"yolop.dev/agent/tokens"
	"yolop.dev/packaging"
)

// ManifestCost counts what the extension m describes adds to every model
// request, by the rules of [tokens.Of]: its tools with their schemas
// (never_defer ones in every request, deferred ones once tool_search finds
// them), its static prompt text and its skills' lines of the skills
// index. A dynamic prompt is counted by its static text; what its server
// adds each turn is bounded by the prompt's max_bytes, not counted. A
// Claude Code plugin adds its skills' lines; a package with neither adds
// nothing.
func ManifestCost(m *packaging.Manifest) tokens.Cost {
	if m == nil || m.Yolop == nil && m.Declarative == nil {
		return tokens.Cost{}
	}
	if m.Yolop == nil { // a Claude Code plugin: only its skills' index lines
		var skills []tokens.Skill
		for _, s := range m.Skills {
			skills = append(skills, tokens.Skill{Name: s.Name, Description: s.Description})
		}
		return tokens.Of(m.Name, nil, "", skills)
	}
	var tools []tokens.Tool
	for _, t := range m.Yolop.Tools {
		tools = append(tools, tokens.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Deferred: !t.NeverDefer})
	}
	prompt := ""
	if m.Yolop.Prompt != nil {
		prompt = m.Yolop.Prompt.Text
	}
	var skills []tokens.Skill
	for _, s := range m.Skills {
		skills = append(skills, tokens.Skill{Name: s.Name, Description: s.Description})
	}
	return tokens.Of(m.Name, tools, prompt, skills)
}
