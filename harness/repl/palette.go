package repl

import (
	"bytes"
	"encoding/json"
	"strings"
)

// An EntryKind says what a palette [Entry] names.
type EntryKind string

// The kinds of palette entries.
const (
	// KindCommand is one of the REPL's own commands ([Commands]).
	KindCommand EntryKind = "command"
	// KindExtensionCommand is an extension's slash command, /<ext>:<name>.
	KindExtensionCommand EntryKind = "extension"
	// KindTool is a session tool, which /call runs.
	KindTool EntryKind = "tool"
)

// An Entry is one item a command palette offers: a command the line can
// start with, or a tool the line "/call <tool>" can name.
type Entry struct {
	Kind EntryKind
	// Name is what the entry puts on the line: "/tools", "/echo:greet",
	// or a tool's name (which goes after "/call ").
	Name string
	// Args is the argument form after the name: "<tool> [json]" for
	// /call, "[args]" for an extension command, and for a tool the
	// summary of its input schema ([ArgsSummary]). Empty means none.
	Args string
	// NeedsArgs says the entry does nothing useful without arguments: a
	// command with a required argument (/call, /enable) or a tool whose
	// schema requires a property. A palette may run an entry that does
	// not need any at once, and complete one that does.
	NeedsArgs bool
	// Description is one line for a person.
	Description string
	// Schema is a tool's input schema as declared (JSON Schema), nil for
	// a command.
	Schema json.RawMessage
}

// commandHelp describes each of [Commands]: its argument form (a
// required argument in <>, an optional one in []) and one line.
var commandHelp = map[string]struct{ args, desc string }{
	"/tools":     {"", "list the session's tools"},
	"/prompt":    {"", "show the system prompt with the extensions' contributions"},
	"/call":      {"<tool> [json]", "call a tool with JSON arguments"},
	"/commands":  {"", "list the extensions' slash commands"},
	"/skills":    {"[name]", "list the skills, or show one's SKILL.md"},
	"/reload":    {"<ext>", "restart an extension"},
	"/enable":    {"<ext>", "enable an extension"},
	"/disable":   {"<ext>", "disable an extension"},
	"/workspace": {"<dir>", "change the workspace directory"},
	"/status":    {"", "extensions, MCP servers and context use"},
	"/help":      {"", "list the commands and keys"},
	"/quit":      {"", "end the session"},
}

// Palette lists what a command palette offers, in this order: the REPL's
// own [Commands], the extensions' slash commands (/<ext>:<name>) and the
// session's tools, which complete a "/call " line. Each has its argument
// form and one line of description. It lists what the session has now: an
// /enable or /disable still queued shows after the next command runs it.
// Unlike [REPL.Completions] it starts nothing, so a UI may call it on
// every key.
func (r *REPL) Palette() []Entry {
	s := r.o.Session
	var out []Entry
	for _, c := range Commands {
		h := commandHelp[c]
		out = append(out, Entry{Kind: KindCommand, Name: c, Args: h.args, NeedsArgs: strings.HasPrefix(h.args, "<"), Description: h.desc})
	}
	for _, c := range s.Commands() {
		if !strings.Contains(c.Name, ":") {
			continue // a built-in capability's command: Run only takes /<ext>:<name>
		}
		out = append(out, Entry{Kind: KindExtensionCommand, Name: "/" + c.Name, Args: "[args]", Description: firstLine(c.Description)})
	}
	for _, t := range s.Tools() {
		out = append(out, Entry{Kind: KindTool, Name: t.Name, Args: ArgsSummary(t.Def.InputSchema), NeedsArgs: requiresArgs(t.Def.InputSchema),
			Description: firstSentence(firstLine(t.Def.Description)), Schema: t.Def.InputSchema})
	}
	return out
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// schema is the part of a JSON Schema an argument summary reads.
type schema struct {
	Type       json.RawMessage `json:"type"`
	Properties json.RawMessage `json:"properties"`
	Required   []string        `json:"required"`
	Items      *schema         `json:"items"`
	Enum       []any           `json:"enum"`
	Const      any             `json:"const"`
	AnyOf      []schema        `json:"anyOf"`
	OneOf      []schema        `json:"oneOf"`
}

// ArgsSummary renders a tool's input schema as a compact argument form,
// the properties in the order the schema lists them, an optional one marked
// "?": {path: string, n?: integer, tags?: string[], mode: "a"|"b"}. A
// nested object is "object" and a property without a type "any". An
// empty schema, or one with no properties, is "{}"; one that is not an
// object schema is "" (say so with the schema itself).
func ArgsSummary(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return ""
	}
	if t := typeName(s); t != "object" && t != "any" {
		return ""
	}
	props := orderedProps(s.Properties)
	if len(props) == 0 {
		return "{}"
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	parts := make([]string, 0, len(props))
	for _, p := range props {
		name := p.name
		if !required[name] {
			name += "?"
		}
		parts = append(parts, name+": "+typeName(p.s))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// requiresArgs says whether a schema requires any property.
func requiresArgs(raw json.RawMessage) bool {
	var s schema
	_ = json.Unmarshal(raw, &s)
	return len(s.Required) > 0
}

type prop struct {
	name string
	s    schema
}

// orderedProps reads a properties object keeping its keys' order, which
// a map would lose.
func orderedProps(raw json.RawMessage) []prop {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []prop
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		var s schema
		if err := dec.Decode(&s); err != nil {
			// Not a schema object (true, false): any value.
			s = schema{}
		}
		out = append(out, prop{name, s})
	}
	return out
}

// typeName is a schema's type in a summary: its "type" (several joined
// with |, null left out), an enum's or a const's values, an array's item
// type with [], an anyOf's or oneOf's alternatives, or "any".
func typeName(s schema) string {
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, v := range s.Enum {
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		return strings.Join(vals, "|")
	}
	if s.Const != nil {
		b, _ := json.Marshal(s.Const)
		return string(b)
	}
	var types []string
	var one string
	if json.Unmarshal(s.Type, &one) == nil && one != "" {
		types = []string{one}
	} else {
		var many []string
		_ = json.Unmarshal(s.Type, &many)
		for _, t := range many {
			if t != "null" || len(many) == 1 {
				types = append(types, t)
			}
		}
	}
	for i, t := range types {
		if t == "array" {
			item := "any"
			if s.Items != nil {
				item = typeName(*s.Items)
			}
			if strings.Contains(item, "|") {
				item = "(" + item + ")"
			}
			types[i] = item + "[]"
		}
	}
	if len(types) == 0 {
		alts := s.AnyOf
		if len(alts) == 0 {
			alts = s.OneOf
		}
		for _, a := range alts {
			if t := typeName(a); t != "null" {
				types = append(types, t)
			}
		}
	}
	if len(types) == 0 {
		if len(s.Properties) > 0 {
			return "object"
		}
		return "any"
	}
	return strings.Join(types, "|")
}
