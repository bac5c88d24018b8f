package packaging

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

func TestSchemaCopyIsIdentical(t *testing.T) {
	published, err := os.ReadFile(filepath.Join("..", "schema", "manifest", "v1", "plugin.schema.json"))
	if err != nil {
		t.Fatalf("reading the published schema: %v", err)
	}
	if !bytes.Equal(published, SchemaJSON()) {
		t.Fatal("schema/manifest/v1/plugin.schema.json differs from packaging/plugin.schema.json; copy packaging/plugin.schema.json over it (the packaging copy is canonical)")
	}
	if _, err := compiledSchema(); err != nil {
		t.Fatalf("embedded schema does not compile: %v", err)
	}
}

func TestLoadExample(t *testing.T) {
	m, err := Load("testdata/lsp")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/lsp")
	abs, _ = filepath.EvalSymlinks(abs)
	if m.Name != "lsp" || m.Version != "0.1.0" || m.Dir != abs || m.Engines["yolop"] != ">=0.1" {
		t.Errorf("identity = %q %q %q %v", m.Name, m.Version, m.Dir, m.Engines)
	}
	f := m.Yolop
	if f.ProtocolVersion != "1.0" || f.CapabilityServer.Command != "yolop-extension-lsp" {
		t.Errorf("facet = %+v", f)
	}
	var names []string
	for _, tl := range f.Tools {
		names = append(names, tl.Name)
		if !tl.NeverDefer {
			t.Errorf("tool %s lost never_defer", tl.Name)
		}
	}
	want := []string{"lsp_definition", "lsp_references", "lsp_hover", "lsp_diagnostics", "lsp_rename", "lsp_symbols", "lsp_code_actions"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if !f.Tools[4].Streaming {
		t.Error("lsp_rename should be streaming")
	}
	if f.ConfigSchemaFile != "config.schema.json" || !bytes.Contains(f.ConfigSchema, []byte("request_timeout_ms")) {
		t.Errorf("config_schema $ref not resolved: file %q, %s", f.ConfigSchemaFile, f.ConfigSchema)
	}
	if f.Prompt == nil || !strings.Contains(f.Prompt.Text, "lsp_*") || f.Prompt.File != "prompt.md" {
		t.Errorf("prompt file not read: %+v", f.Prompt)
	}
}

func TestLoadCargo(t *testing.T) {
	m, err := Load("testdata/cargo")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "echo" || m.Version != "0.2.0" || !strings.HasSuffix(m.File, "Cargo.toml") {
		t.Errorf("identity = %q %q %q", m.Name, m.Version, m.File)
	}
	f := m.Yolop
	if f.CapabilityServer.Command != "yolop-extension-echo" || !f.Status || len(f.Tools) != 1 || f.Tools[0].Name != "echo" {
		t.Errorf("facet = %+v", f)
	}
	if h := f.Hooks[0]; h.Matcher != "*" || h.OnError != "block" || h.TimeoutMS != 500 {
		t.Errorf("hook = %+v", h)
	}
	if !jsonEqual(f.Tools[0].Example, []byte(`{"text":"hi"}`)) {
		t.Errorf("example = %s", f.Tools[0].Example)
	}
}

// pkg writes a package into a fresh directory: files maps relative paths to
// contents; a manifest value that is not a string is marshalled to JSON.
func pkg(t *testing.T, files map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var b []byte
		switch c := content.(type) {
		case string:
			b = []byte(c)
		case []byte:
			b = c
		default:
			var err error
			if b, err = json.Marshal(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type obj = map[string]any

// manifest returns a valid manifest whose facet is edited by fn.
func manifest(fn func(f obj)) obj {
	f := obj{
		"protocol_version": "1.0",
		"capabilityServer": obj{"command": "srv"},
		"tools":            []any{obj{"name": "a"}, obj{"name": "b"}, obj{"name": "c"}},
	}
	if fn != nil {
		fn(f)
	}
	return obj{"name": "demo", "version": "1.0.0", "yolop": f}
}

func TestLoadRefusesHostileManifests(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "evil.json"), []byte(`{"type":"object"}`), 0o644)
	os.WriteFile(filepath.Join(outside, "srv"), []byte("#!/bin/sh\n"), 0o755)

	cases := []struct {
		name  string
		setup func(t *testing.T) string
		is    error
		want  []string // substrings of the error
	}{
		{"missing manifest", func(t *testing.T) string { return t.TempDir() }, ErrNoManifest, []string{"plugin.json"}},
		{"not JSON", func(t *testing.T) string { return pkg(t, map[string]any{"plugin.json": "{\"name\": "}) }, ErrInvalidManifest, []string{"not valid JSON"}},
		{"missing name", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": obj{"version": "1"}})
		}, ErrInvalidManifest, []string{"(manifest): missing property 'name'"}},
		{"bad tool name names the path", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["tools"] = []any{obj{"name": "a"}, obj{"name": "b"}, obj{"name": "has space"}}
			})})
		}, ErrInvalidManifest, []string{"yolop.tools[2].name", "does not match pattern"}},
		{"wrong type names the path", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["trace"] = "yes" })})
		}, ErrInvalidManifest, []string{"yolop.trace", "want boolean"}},
		{"unknown protocol major", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["protocol_version"] = "2.0" })})
		}, ErrUnsupportedProtocol, []string{`"2.0"`, "major 2", "protocol major 1"}},
		{"duplicate tool names", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["tools"] = []any{obj{"name": "a"}, obj{"name": "b"}, obj{"name": "a"}}
			})})
		}, ErrDuplicateName, []string{"yolop.tools[2].name", `tool "a" is already declared at yolop.tools[0]`}},
		{"duplicate hooks", func(t *testing.T) string {
			h := obj{"event": "pre_tool_use", "matcher": "*"}
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["hooks"] = []any{h, h} })})
		}, ErrDuplicateName, []string{"yolop.hooks[1]"}},
		{"duplicate commands", func(t *testing.T) string {
			c := obj{"name": "go"}
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["commands"] = []any{c, c} })})
		}, ErrDuplicateName, []string{"yolop.commands[1].name"}},
		{"duplicate MCP servers", func(t *testing.T) string {
			s := obj{"name": "m", "type": "http", "url": "https://example.invalid/mcp"}
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["mcpServers"] = []any{s, s} })})
		}, ErrDuplicateName, []string{"yolop.mcpServers[1].name"}},
		{"unknown hook event", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["hooks"] = []any{obj{"event": "on_boot", "matcher": "*"}}
			})})
		}, ErrInvalidManifest, []string{"yolop.hooks[0].event"}},
		{"bad on_error", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["hooks"] = []any{obj{"event": "pre_tool_use", "matcher": "x", "on_error": "ignore"}}
			})})
		}, ErrInvalidManifest, []string{"yolop.hooks[0].on_error"}},
		{"match-all not spelled *", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["hooks"] = []any{obj{"event": "pre_tool_use", "matcher": "**"}}
			})})
		}, ErrInvalidManifest, []string{"yolop.hooks[0].matcher", `spell match-all as "*"`}},
		{"zero tool timeout", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["tools"] = []any{obj{"name": "a", "timeout_ms": 0}}
			})})
		}, ErrInvalidManifest, []string{"yolop.tools[0].timeout_ms", "minimum"}},
		{"negative tool timeout", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["tools"] = []any{obj{"name": "a", "timeout_ms": -1}}
			})})
		}, ErrInvalidManifest, []string{"yolop.tools[0].timeout_ms"}},
		{"tool timeout over a day", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["tools"] = []any{obj{"name": "a", "timeout_ms": 86400001}}
			})})
		}, ErrInvalidManifest, []string{"yolop.tools[0].timeout_ms", "maximum"}},
		{"fractional tool timeout", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["tools"] = []any{obj{"name": "a", "timeout_ms": 1.5}}
			})})
		}, ErrInvalidManifest, []string{"yolop.tools[0].timeout_ms", "want integer"}},
		{"insane hook timeout", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["hooks"] = []any{obj{"event": "pre_tool_use", "matcher": "x", "timeout_ms": 3600000}}
			})})
		}, ErrInvalidManifest, []string{"yolop.hooks[0].timeout_ms"}},
		{"stdio MCP server given a url", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["mcpServers"] = []any{obj{"name": "m", "type": "stdio", "url": "https://x.invalid"}}
			})})
		}, ErrInvalidManifest, []string{"yolop.mcpServers[0]"}},
		{"tools without a server", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { delete(f, "capabilityServer") })})
		}, ErrInvalidManifest, []string{"yolop.capabilityServer", "tools"}},
		{"command escapes with ..", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["capabilityServer"] = obj{"command": "bin/../../srv"} })})
		}, ErrEscapesPackage, []string{"yolop.capabilityServer.command", "'..'"}},
		{"command is absolute", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["capabilityServer"] = obj{"command": filepath.Join(outside, "srv")}
			})})
		}, ErrEscapesPackage, []string{"absolute path"}},
		{"command symlink out of the package", func(t *testing.T) string {
			d := pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["capabilityServer"] = obj{"command": "./bin/srv"} })})
			os.Mkdir(filepath.Join(d, "bin"), 0o755)
			os.Symlink(filepath.Join(outside, "srv"), filepath.Join(d, "bin", "srv"))
			return d
		}, ErrEscapesPackage, []string{"outside the package"}},
		{"bare command whose bin/ entry links out", func(t *testing.T) string {
			d := pkg(t, map[string]any{"plugin.json": manifest(nil)})
			os.Mkdir(filepath.Join(d, "bin"), 0o755)
			os.Symlink(filepath.Join(outside, "srv"), filepath.Join(d, "bin", "srv"))
			return d
		}, ErrEscapesPackage, []string{"outside the package"}},
		{"bin directory links out", func(t *testing.T) string {
			d := pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["capabilityServer"] = obj{"command": "bin/missing"} })})
			os.Symlink(outside, filepath.Join(d, "bin"))
			return d
		}, ErrEscapesPackage, []string{"outside the package"}},
		{"dangling symlink out", func(t *testing.T) string {
			d := pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["capabilityServer"] = obj{"command": "bin/srv"} })})
			os.Mkdir(filepath.Join(d, "bin"), 0o755)
			os.Symlink("/nonexistent/srv", filepath.Join(d, "bin", "srv"))
			return d
		}, ErrEscapesPackage, []string{"outside the package"}},
		{"MCP stdio command escapes", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["mcpServers"] = []any{obj{"name": "m", "type": "stdio", "command": "../m"}}
			})})
		}, ErrEscapesPackage, []string{"yolop.mcpServers[0].command"}},
		{"$ref out of the package", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["config_schema"] = obj{"$ref": "../evil.json"} })})
		}, ErrEscapesPackage, []string{"yolop.config_schema.$ref"}},
		{"$ref absolute", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["config_schema"] = obj{"$ref": filepath.Join(outside, "evil.json")}
			})})
		}, ErrEscapesPackage, []string{"yolop.config_schema.$ref"}},
		{"$ref URL", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["config_schema"] = obj{"$ref": "https://example.invalid/s.json"}
			})})
		}, ErrEscapesPackage, []string{"inside the package"}},
		{"$ref symlink out", func(t *testing.T) string {
			d := pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["config_schema"] = obj{"$ref": "./c.json"} })})
			os.Symlink(filepath.Join(outside, "evil.json"), filepath.Join(d, "c.json"))
			return d
		}, ErrEscapesPackage, []string{"yolop.config_schema.$ref"}},
		{"prompt file out", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["prompt"] = obj{"file": "../../etc/passwd"} })})
		}, ErrEscapesPackage, []string{"yolop.prompt.file"}},
		{"plugin.json symlink out", func(t *testing.T) string {
			d := t.TempDir()
			os.WriteFile(filepath.Join(outside, "plugin.json"), []byte(`{"name":"x","version":"1"}`), 0o644)
			os.Symlink(filepath.Join(outside, "plugin.json"), filepath.Join(d, "plugin.json"))
			return d
		}, ErrEscapesPackage, []string{"symlink"}},
		{"invalid config schema", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["config_schema"] = obj{"type": 7} })})
		}, ErrInvalidManifest, []string{"yolop.config_schema", "not a valid JSON Schema"}},
		{"bad env name in config schema", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
				f["config_schema"] = obj{"type": "object", "properties": obj{"tok": obj{"type": "string", "env": "BAD-NAME"}}}
			})})
		}, ErrInvalidManifest, []string{"yolop.config_schema.properties.tok.env"}},
		{"static prompt over its cap", func(t *testing.T) string {
			return pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["prompt"] = obj{"text": "0123456789", "max_bytes": 4} })})
		}, ErrInvalidManifest, []string{"yolop.prompt", "max_bytes 4"}},
		{"cargo facet error names the metadata path", func(t *testing.T) string {
			return pkg(t, map[string]any{"Cargo.toml": "[package]\nname = \"yolop-extension-x\"\nversion = \"1.0.0\"\n[package.metadata.yolop]\nprotocol_version = \"1.0\"\ncapabilityServer = { command = \"x\" }\ntools = [{ name = \"bad name\" }]\n"})
		}, ErrInvalidManifest, []string{"package.metadata.yolop.tools[0].name"}},
		{"cargo without metadata", func(t *testing.T) string {
			return pkg(t, map[string]any{"Cargo.toml": "[package]\nname = \"x\"\nversion = \"1.0.0\"\n"})
		}, ErrNoManifest, []string{"[package.metadata.yolop]"}},
		{"cargo not TOML", func(t *testing.T) string {
			return pkg(t, map[string]any{"Cargo.toml": "[package\n"})
		}, ErrInvalidManifest, []string{"not valid TOML"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.setup(t))
			if err == nil {
				t.Fatal("Load accepted a hostile manifest")
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadRefuses100MBManifestWithoutReadingIt(t *testing.T) {
	d := t.TempDir()
	f, err := os.Create(filepath.Join(d, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A sparse 100 MB file: reading it all would allocate 100 MB.
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Load(d)
	if !errors.Is(err, ErrManifestTooLarge) || !strings.Contains(err.Error(), "104857600 bytes") {
		t.Fatalf("want ErrManifestTooLarge naming the size, got %v", err)
	}
	// The cap is an option: a small cap refuses a small file the same way.
	small := pkg(t, map[string]any{"plugin.json": manifest(nil)})
	if _, err := (LoadOptions{MaxManifestBytes: 10}).Load(small); !errors.Is(err, ErrManifestTooLarge) {
		t.Fatalf("lowered cap: want ErrManifestTooLarge, got %v", err)
	}
	// and applies to referenced files.
	ref := pkg(t, map[string]any{
		"plugin.json": manifest(func(f obj) { f["config_schema"] = obj{"$ref": "./big.json"} }),
		"big.json":    `{"type":"object","description":"` + strings.Repeat("x", 4000) + `"}`,
	})
	if _, err := (LoadOptions{MaxManifestBytes: 2000}).Load(ref); !errors.Is(err, ErrManifestTooLarge) {
		t.Fatalf("large $ref: want ErrManifestTooLarge, got %v", err)
	}
}

func TestLoadNeverExecutes(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	d := pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["capabilityServer"] = obj{"command": "./srv"} })})
	os.WriteFile(filepath.Join(d, "srv"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	m, err := Load(d)
	if err != nil {
		t.Fatal(err)
	}
	_ = Summary(m)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("loading a manifest ran its server command")
	}
}

func TestLoadIgnoresUnknownFields(t *testing.T) {
	m := manifest(func(f obj) {
		f["future_facet"] = obj{"x": 1}
		f["tools"] = []any{obj{"name": "a", "cost_hint": "cheap"}}
	})
	m["publisher"] = "someone"
	got, err := Load(pkg(t, map[string]any{"plugin.json": m}))
	if err != nil {
		t.Fatalf("unknown fields must be ignored: %v", err)
	}
	if got.Yolop.Tools[0].Name != "a" {
		t.Errorf("tools = %+v", got.Yolop.Tools)
	}
}

// encoding/json matches keys case-insensitively; a case-variant key the
// schema never saw must not override the validated one.
func TestLoadIgnoresCaseVariantKeys(t *testing.T) {
	d := pkg(t, map[string]any{"plugin.json": `{"name":"demo","version":"1","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"},"tools":[{"name":"ok"}],"TOOLS":[{"name":"sneaky"}],
		"CapabilityServer":{"command":"/bin/sh"},"Trace":true,"hooks":[{"event":"pre_tool_use","matcher":"a","Matcher":"*"}]}}`})
	m, err := Load(d)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Yolop
	if len(f.Tools) != 1 || f.Tools[0].Name != "ok" || f.CapabilityServer.Command != "srv" || f.Trace || f.Hooks[0].Matcher != "a" {
		t.Errorf("a case-variant key overrode a validated one: %+v", f)
	}
}

func TestPromptForms(t *testing.T) {
	m, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["prompt"] = "Use the tools." })}))
	if err != nil {
		t.Fatal(err)
	}
	if m.Yolop.Prompt.Text != "Use the tools." || m.Yolop.Prompt.Dynamic {
		t.Errorf("string prompt = %+v", m.Yolop.Prompt)
	}
	m, err = Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
		f["prompt"] = obj{"text": "base", "dynamic": true, "max_bytes": 2048}
	})}))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&Prompt{Text: "base", Dynamic: true, MaxBytes: 2048}, m.Yolop.Prompt); d != "" {
		t.Errorf("object prompt (-want +got):\n%s", d)
	}
	if _, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
		f["prompt"] = obj{"text": "a", "file": "b.md"}
	})})); err == nil {
		t.Error("a prompt with both text and file was accepted")
	}
}

func TestNeverDeferBudgetWarns(t *testing.T) {
	var tools []any
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		tools = append(tools, obj{"name": n, "never_defer": true})
	}
	m, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["tools"] = tools })}))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "9 tools are never_defer") {
		t.Errorf("warnings = %q", m.Warnings)
	}
}

func TestToolTimeoutMS(t *testing.T) {
	m, err := Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) {
		f["tools"] = []any{obj{"name": "a", "timeout_ms": 1800000}, obj{"name": "b", "timeout_ms": MaxToolTimeoutMS}, obj{"name": "c"}}
	})}))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, tl := range m.Yolop.Tools {
		got = append(got, tl.TimeoutMS)
	}
	if d := cmp.Diff([]int{1800000, 86400000, 0}, got); d != "" {
		t.Errorf("timeout_ms (-want +got):\n%s", d)
	}
	// The same field in Cargo.toml metadata.
	m, err = Load(pkg(t, map[string]any{"Cargo.toml": `[package]
name = "yolop-extension-slow"
version = "0.1.0"

[package.metadata.yolop]
protocol_version = "1.0"
capabilityServer = { command = "srv" }

[[package.metadata.yolop.tools]]
name = "build"
timeout_ms = 3600000
`}))
	if err != nil {
		t.Fatal(err)
	}
	if tl := m.Yolop.Tools[0]; tl.TimeoutMS != 3600000 {
		t.Errorf("Cargo.toml timeout_ms = %d", tl.TimeoutMS)
	}
}

// A tool's approval is auto (or absent) or always (always_ask its older
// spelling), its risk low, medium or high; anything else is refused with
// the values allowed.
func TestToolPolicyVocabulary(t *testing.T) {
	load := func(tool obj) (*Manifest, error) {
		return Load(pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["tools"] = []any{tool} })}))
	}
	for _, ok := range []obj{
		{"name": "a"},
		{"name": "a", "approval": "auto", "risk": "low"},
		{"name": "a", "approval": "always", "risk": "medium", "narration": "Do {x}"},
		{"name": "a", "approval": "always_ask", "risk": "high"},
	} {
		m, err := load(ok)
		if err != nil {
			t.Errorf("%v refused: %v", ok, err)
			continue
		}
		if tl := m.Yolop.Tools[0]; tl.Approval != stringOf(ok["approval"]) || tl.Risk != stringOf(ok["risk"]) {
			t.Errorf("%v loaded as %+v", ok, tl)
		}
	}
	for _, bad := range []struct {
		tool  obj
		field string
		want  []string
	}{
		{obj{"name": "a", "approval": "ask"}, "yolop.tools[0].approval", host.Approvals},
		{obj{"name": "a", "approval": "never"}, "yolop.tools[0].approval", host.Approvals},
		{obj{"name": "a", "approval": "Always"}, "yolop.tools[0].approval", host.Approvals},
		{obj{"name": "a", "risk": "extreme"}, "yolop.tools[0].risk", host.Risks},
	} {
		_, err := load(bad.tool)
		if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), bad.field+":") {
			t.Errorf("%v: err = %v, want a refusal naming %s", bad.tool, err, bad.field)
			continue
		}
		for _, v := range bad.want {
			if !strings.Contains(err.Error(), strconv.Quote(v)) && !strings.Contains(err.Error(), "'"+v+"'") {
				t.Errorf("%v: %q does not name the allowed value %q", bad.tool, err, v)
			}
		}
	}
}

func stringOf(v any) string { s, _ := v.(string); return s }

func TestServerBinary(t *testing.T) {
	server := func(cmd string) *Manifest {
		return &Manifest{Name: "x", Yolop: &Facet{CapabilityServer: &ServerCommand{Command: cmd}}}
	}
	for _, tc := range []struct {
		what string
		m    *Manifest
		name string
		ok   bool
	}{
		{"bare command", server("yolop-extension-echo"), "yolop-extension-echo", true},
		{"bin/<name>", server("bin/srv"), "srv", true},
		{"a script inside the package", server("./run.sh"), "", false},
		{"a path below a directory", server("scripts/run"), "", false},
		{"a path below bin/", server("bin/sub/srv"), "", false},
		{"bin/ alone", server("bin/"), "", false},
		{"a backslash", server(`bin\srv`), "", false},
		{"an empty command", server(""), "", false},
		{"no capability server", &Manifest{Name: "x", Yolop: &Facet{}}, "", false},
		{"no yolop facet", &Manifest{Name: "x"}, "", false},
		{"no manifest", nil, "", false},
	} {
		name, ok := tc.m.ServerBinary()
		if name != tc.name || ok != tc.ok {
			t.Errorf("%s: ServerBinary() = %q, %v; want %q, %v", tc.what, name, ok, tc.name, tc.ok)
		}
	}
}

// TestSchemaVocabulariesAreYEPs: the closed vocabularies and limits the
// manifest schema spells out as JSON literals are those of core/yep and of
// this package, so the schema cannot drift from the code that applies it.
func TestSchemaVocabulariesAreYEPs(t *testing.T) {
	var schema struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Enum    []string `json:"enum"`
				Maximum int      `json:"maximum"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON(), &schema); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		def, prop string
		want      []string
	}{
		{"hook", "event", yep.HookEvents},
		{"hook", "on_error", yep.HookOnErrors},
		{"mcpServer", "type", yep.MCPTransports},
		{"tool", "approval", host.Approvals},
		{"tool", "risk", host.Risks},
	} {
		if d := cmp.Diff(tc.want, schema.Defs[tc.def].Properties[tc.prop].Enum); d != "" {
			t.Errorf("$defs.%s.%s.enum (-core/yep +schema):\n%s", tc.def, tc.prop, d)
		}
	}
	for _, tc := range []struct {
		def, prop string
		want      int
	}{
		{"hook", "timeout_ms", MaxHookTimeoutMS},
		{"tool", "timeout_ms", MaxToolTimeoutMS},
	} {
		if got := schema.Defs[tc.def].Properties[tc.prop].Maximum; got != tc.want {
			t.Errorf("$defs.%s.%s.maximum = %d, want %d", tc.def, tc.prop, got, tc.want)
		}
	}
}
