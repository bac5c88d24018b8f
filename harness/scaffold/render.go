package scaffold

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"go/format"
	"io/fs"
	"slices"
	"strings"
	"text/template"

	"yolop.dev/packaging"
)

//go:embed templates
var templates embed.FS

// file is one file to write.
type file struct {
	path string // package-relative, slash-separated
	data []byte
	mode fs.FileMode
}

// render produces every file of the package.
func (sp *spec) render() ([]file, error) {
	manifest, err := sp.manifest()
	if err != nil {
		return nil, err
	}
	files := []file{{path: "plugin.json", data: manifest, mode: 0o644}}
	add := func(path, tmpl string, mode fs.FileMode) error {
		b, err := sp.exec(tmpl)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".go") {
			if b, err = format.Source(b); err != nil {
				return fmt.Errorf("scaffold: %s does not parse (a bug in the template): %w", path, err)
			}
		}
		files = append(files, file{path: path, data: b, mode: mode})
		return nil
	}
	var steps []error
	steps = append(steps, add("README.md", "README.md.tmpl", 0o644))
	switch {
	case sp.SDK:
		v := vendoredSDKs[sp.Lang]
		steps = append(steps, add("bin/"+sp.Binary, v.template, 0o755))
		vendored, err := v.files()
		if err != nil {
			return nil, err
		}
		files = append(files, vendored...)
	case sp.Lang == Python:
		steps = append(steps, add("bin/"+sp.Binary, "python/server.py.tmpl", 0o755))
	case sp.Lang == TypeScript:
		steps = append(steps, add("bin/"+sp.Binary, "typescript/server.js.tmpl", 0o755))
	case sp.Lang == Go:
		steps = append(steps, add("main.go", "go/main.go.tmpl", 0o644), add(".gitignore", "go/gitignore.tmpl", 0o644))
		files = append(files, file{path: "go.mod", data: sp.goMod(), mode: 0o644}, file{path: "go.sum", data: sp.CoreSum, mode: 0o644})
		if sp.CoreVendor {
			vendored, err := coreFiles()
			if err != nil {
				return nil, err
			}
			files = append(files, vendored...)
		}
	case sp.Lang == Rust:
		steps = append(steps, add("Cargo.toml", "rust/Cargo.toml.tmpl", 0o644), add("src/main.rs", "rust/main.rs.tmpl", 0o644),
			add(".gitignore", "rust/gitignore.tmpl", 0o644))
		if sp.CargoRegistry != "" {
			steps = append(steps, add(".cargo/config.toml", "rust/cargo-config.toml.tmpl", 0o644))
		}
	}
	if sp.Skills {
		steps = append(steps, add("skills/"+sp.SkillName+"/SKILL.md", "SKILL.md.tmpl", 0o644))
	}
	for _, err := range steps {
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// exec runs one embedded template over sp.
func (sp *spec) exec(name string) ([]byte, error) {
	t, err := template.New(name).Funcs(template.FuncMap{
		"py":      pyString,
		"js":      jsString,
		"rs":      rustString,
		"go":      goString,
		"join":    strings.Join,
		"add":     func(a, b int) int { return a + b },
		"matches": sp.matchers,
	}).ParseFS(templates, "templates/"+name)
	if err != nil {
		return nil, fmt.Errorf("scaffold: template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name[strings.LastIndex(name, "/")+1:], sp); err != nil {
		return nil, fmt.Errorf("scaffold: template %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// matchers lists the globs subscribed to event.
func (sp *spec) matchers(event string) []string {
	var out []string
	for _, h := range sp.Hooks {
		if h.Event == event {
			out = append(out, h.Matcher)
		}
	}
	return out
}

// Tool argument schema and example every scaffolded tool starts with.
var (
	toolSchema  = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"Text for the tool to work on."}}}`)
	toolExample = json.RawMessage(`{"text":"hello"}`)
	configJSON  = `{"type":"object","properties":{"%s":{"type":"string","description":"How the extension greets (an example setting; replace it).","default":"hello"}},"additionalProperties":false}`
)

// manifest renders plugin.json: exactly the requested facets.
func (sp *spec) manifest() ([]byte, error) {
	f := &packaging.Facet{
		ProtocolVersion:  "1.0",
		CapabilityServer: &packaging.ServerCommand{Command: sp.Binary},
		Status:           sp.Status,
		UIAsk:            sp.Ask,
		Skills:           sp.Skills,
	}
	for _, t := range sp.Tools {
		f.Tools = append(f.Tools, packaging.Tool{
			Name:        t.Name,
			Description: fmt.Sprintf("The %s tool of the %s extension; say here what it does and when to call it.", t.Name, sp.Name),
			InputSchema: toolSchema, NeverDefer: t.NeverDefer, Streaming: true, Risk: "low", Example: toolExample,
		})
	}
	for _, h := range sp.Hooks {
		f.Hooks = append(f.Hooks, packaging.Hook{Event: h.Event, Matcher: h.Matcher, TimeoutMS: 2000, OnError: "warn"})
	}
	if sp.Prompt || sp.Dynamic {
		p := &packaging.Prompt{Text: sp.PromptText, Dynamic: sp.Dynamic}
		if sp.Dynamic {
			p.MaxBytes = 4096
		}
		f.Prompt = p
	}
	for _, c := range sp.Commands {
		f.Commands = append(f.Commands, packaging.Command{Name: c.Name, Description: c.Description})
	}
	if sp.Config {
		f.ConfigSchema = json.RawMessage(fmt.Sprintf(configJSON, sp.ConfigField))
	}
	m := packaging.Manifest{
		Name: sp.Name, Version: sp.Version, Description: sp.Description,
		Engines: map[string]string{"yolop": ">=0.1"},
		Yolop:   f,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("scaffold %s: plugin.json: %w", sp.Name, err)
	}
	return b.Bytes(), nil
}

// goMod renders go.mod: the SDK, replaced with a checkout's core or the
// copy under CoreVendorDir.
func (sp *spec) goMod() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo %s\n\nrequire yolop.dev/core v0.0.0\n", sp.Binary, sp.GoDirective)
	if len(sp.CoreRequires) > 0 {
		b.WriteString("\nrequire (\n")
		for _, r := range slices.Sorted(slices.Values(sp.CoreRequires)) { // as go mod tidy orders them
			fmt.Fprintf(&b, "\t%s // indirect\n", r)
		}
		b.WriteString(")\n")
	}
	if sp.CoreVendor {
		b.WriteString("\n// The SDK, yolop.dev/core, is not published: " + CoreVendorDir + " is the source\n// of it that the yolop which scaffolded this package was built from. To\n// upgrade, copy that directory from a package a newer yolop scaffolds,\n// then run: GOWORK=off go mod tidy\n")
	} else {
		b.WriteString("\n// The SDK from a yolop checkout.\n")
	}
	fmt.Fprintf(&b, "replace yolop.dev/core => %s\n", sp.CoreReplace)
	return []byte(b.String())
}

// pyString is a Python string literal.
func pyString(s string) string { return jsonString(s) }

// jsString is a JavaScript string literal.
func jsString(s string) string { return jsonString(s) }

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// goString is a Go string literal.
func goString(s string) string { return fmt.Sprintf("%q", s) }

// rustString is a Rust string literal.
func rustString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
