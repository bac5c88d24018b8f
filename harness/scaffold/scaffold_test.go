package scaffold_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	. "yolop.dev/harness/scaffold" // the tests read as the package's own code

	"yolop.dev/doctor"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// combos are the facet combinations every language is scaffolded with:
// the smallest package, every facet at once, and one with no tools (a
// guard hook and a dynamic prompt).
type combo struct {
	name string
	o    Options
}

var combos = []combo{
	{"tools", Options{Tools: []string{"hello"}}},
	{"everything", Options{
		Tools: []string{"hello", "world"}, Hooks: []string{"pre_tool_use", "post_tool_use:git*"},
		Prompt: true, DynamicPrompt: true, Commands: []string{"greet", "make-it"},
		Status: true, Ask: true, Config: true, Skills: true,
	}},
	{"guard", Options{Hooks: []string{"pre_tool_use"}, DynamicPrompt: true}},
}

// doctorOptions bound the doctor's waits by the test's deadline rather
// than by how fast the machine is (load 15 on 2 cores happens): the
// checks are behavioural, and a longer bound only lets a slow start
// finish.
func doctorOptions() doctor.Options {
	return doctor.Options{HandshakeTimeout: time.Minute, CallTimeout: time.Minute, PromptTimeout: time.Minute, StopGrace: 30 * time.Second}
}

func accept(context.Context, manager.Proposal) error { return nil }

// TestNewInstallsAndPassesDoctor is the correct-by-construction check:
// for every language and facet combination, scaffold, build, install in
// place and run the doctor on the installed extension, with zero edits.
// Every check must pass; the only warning allowed is the skipped cancel
// check of a package with no tools. The package with every facet is then
// driven through the conformance corpus.
func TestNewInstallsAndPassesDoctor(t *testing.T) {
	t.Parallel()
	for _, lang := range Langs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			base := needLang(t, lang)
			cargoTarget := ""
			if lang == Rust {
				cargoTarget = t.TempDir() // shared by the combos: serde_json compiles once
			}
			for _, c := range combos {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					o := c.o
					o.Name, o.Lang = c.name, lang
					o.CoreDir, o.CargoRegistry = base.CoreDir, base.CargoRegistry
					o.Dir = filepath.Join(t.TempDir(), c.name)
					r, err := New(o)
					if err != nil {
						t.Fatal(err)
					}
					if cargoTarget != "" {
						for i := range r.Build {
							r.Build[i].Env = append(r.Build[i].Env, "CARGO_TARGET_DIR="+cargoTarget)
						}
					}
					if err := r.RunBuild(t.Context(), nil); err != nil {
						t.Fatal(err)
					}
					checkManifest(t, r, o)
					checkServer(t, r)

					installAndDoctor(t, r, func(ch doctor.Check) bool {
						return ch.Status == doctor.Warn && len(o.Tools) == 0 && ch.Group == doctor.GroupCancel
					})
					if c.name == "everything" {
						t.Run("corpus", func(t *testing.T) { checkCorpus(t, r) })
					}
				})
			}
		})
	}
}

// checkManifest: plugin.json declares exactly the requested facets.
func checkManifest(t *testing.T, r *Result, o Options) {
	t.Helper()
	m, err := packaging.Load(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Yolop
	if m.Name != o.Name || f.CapabilityServer.Command != "yolop-extension-"+o.Name {
		t.Errorf("identity: %s, command %s", m.Name, f.CapabilityServer.Command)
	}
	var tools []string
	for _, tl := range f.Tools {
		tools = append(tools, tl.Name)
		if len(tl.Example) == 0 || len(tl.InputSchema) == 0 || !tl.Streaming {
			t.Errorf("tool %s has no example, no schema or is not streaming", tl.Name)
		}
	}
	if !slices.Equal(tools, o.Tools) {
		t.Errorf("tools = %v, want %v", tools, o.Tools)
	}
	var hooks []string
	for _, hk := range f.Hooks {
		hooks = append(hooks, hk.Event+":"+hk.Matcher)
	}
	var wantHooks []string
	for _, hk := range o.Hooks {
		if !strings.Contains(hk, ":") {
			hk += ":" + DefaultHookMatcher
		}
		wantHooks = append(wantHooks, hk)
	}
	if !slices.Equal(hooks, wantHooks) {
		t.Errorf("hooks = %v, want %v", hooks, wantHooks)
	}
	var cmds []string
	for _, c := range f.Commands {
		cmds = append(cmds, c.Name)
	}
	if !slices.Equal(cmds, o.Commands) {
		t.Errorf("commands = %v, want %v", cmds, o.Commands)
	}
	switch {
	case !o.Prompt && !o.DynamicPrompt && f.Prompt != nil:
		t.Errorf("prompt %+v, none asked", f.Prompt)
	case (o.Prompt || o.DynamicPrompt) && (f.Prompt == nil || f.Prompt.Dynamic != o.DynamicPrompt || (f.Prompt.Text != "") != o.Prompt):
		t.Errorf("prompt = %+v, want static %v dynamic %v", f.Prompt, o.Prompt, o.DynamicPrompt)
	}
	if f.Status != o.Status || f.UIAsk != o.Ask || f.Skills != o.Skills || f.Trace || (f.ConfigSchema != nil) != o.Config || len(f.MCPServers) != 0 {
		t.Errorf("opt-ins: status %v ui_ask %v skills %v trace %v config %s mcp %v", f.Status, f.UIAsk, f.Skills, f.Trace, f.ConfigSchema, f.MCPServers)
	}
	if o.Skills && (len(m.Skills) != 1 || m.Skills[0].Name != SkillName(o.Name)) {
		t.Errorf("skills = %+v", m.Skills)
	}
	if len(m.Warnings) > 0 {
		t.Errorf("manifest warnings: %q", m.Warnings)
	}
}

// checkServer: the server is one executable under bin/, and the raw
// templates are the single dependency-free file the spec asks for.
func checkServer(t *testing.T, r *Result) {
	t.Helper()
	fi, err := os.Stat(filepath.Join(r.Dir, r.Server))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&0o111 == 0 {
		t.Errorf("%s is not executable: %v", r.Server, fi.Mode())
	}
	src, _ := os.ReadFile(filepath.Join(r.Dir, r.Server))
	switch r.Lang {
	case Python:
		if !bytes.HasPrefix(src, []byte("#!/usr/bin/env python3\n")) {
			t.Error("no python3 shebang")
		}
		for _, l := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "from ") {
				mod := strings.Fields(l)[1]
				if !slices.Contains([]string{"fnmatch", "json", "os", "re", "sys", "threading", "traceback"}, mod) {
					t.Errorf("imports %s, not in the standard-library list", mod)
				}
			}
		}
	case TypeScript:
		if !bytes.HasPrefix(src, []byte("#!/usr/bin/env node\n// @ts-check\n")) {
			t.Error("no node shebang and // @ts-check")
		}
		for _, l := range strings.Split(string(src), "\n") {
			if i := strings.Index(l, "require("); i >= 0 && !strings.Contains(l, `require("node:`) {
				t.Errorf("requires something that is not a Node.js built-in: %s", l)
			}
		}
	case Rust:
		toml, _ := os.ReadFile(filepath.Join(r.Dir, "Cargo.toml"))
		_, deps, _ := strings.Cut(string(toml), "[dependencies]")
		if strings.TrimSpace(deps) != `serde_json = "1"` {
			t.Errorf("Cargo.toml dependencies: %q", deps)
		}
	}
}

// TestNewRefusesBadInput: a bad name, an existing directory, an unknown
// language or hook, and contradictory options get an error naming the
// problem, and nothing is written.
func TestNewRefusesBadInput(t *testing.T) {
	parent := t.TempDir()
	if err := os.Mkdir(filepath.Join(parent, "taken"), 0o755); err != nil {
		t.Fatal(err)
	}
	ok := Options{Name: "demo", Lang: Python, Tools: []string{"hello"}}
	for _, tc := range []struct {
		name string
		edit func(o *Options)
		want error
		text string
	}{
		{"upper-case name", func(o *Options) { o.Name = "Demo" }, ErrInvalidName, `extension name "Demo"`},
		{"path as name", func(o *Options) { o.Name = "../x" }, ErrInvalidName, "lowercase letters"},
		{"empty name", func(o *Options) { o.Name = "" }, ErrInvalidName, "extension name"},
		{"unknown language", func(o *Options) { o.Lang = "cobol" }, ErrUnknownLang, "python, typescript, go, rust"},
		{"unknown hook", func(o *Options) { o.Hooks = []string{"on_save"} }, ErrUnknownHook, "pre_tool_use or post_tool_use"},
		{"bad matcher", func(o *Options) { o.Hooks = []string{"pre_tool_use:[a"} }, ErrUnknownHook, "not a tool-name glob"},
		{"match-all spelled **", func(o *Options) { o.Hooks = []string{"pre_tool_use:**"} }, ErrUnknownHook, `spell match-all as "*"`},
		{"bad tool name", func(o *Options) { o.Tools = []string{"say-hi"} }, ErrInvalidName, `tool name "say-hi"`},
		{"tool twice", func(o *Options) { o.Tools = []string{"a", "a"} }, ErrInvalidOptions, `tool "a" is named twice`},
		{"bad command name", func(o *Options) { o.Commands = []string{"Go!"} }, ErrInvalidName, `command name "Go!"`},
		{"commands that share a handler", func(o *Options) { o.Commands = []string{"a-b", "a_b"} }, ErrInvalidOptions, "handle_command_a_b"},
		{"hook twice", func(o *Options) { o.Hooks = []string{"pre_tool_use", "pre_tool_use:bash"} }, ErrInvalidOptions, "named twice"},
		{"core for python", func(o *Options) { o.CoreDir = parent }, ErrInvalidOptions, "--lang go only"},
		{"existing directory", func(o *Options) { o.Dir = filepath.Join(parent, "taken") }, ErrExists, "already exists"},
		{"missing parent", func(o *Options) { o.Dir = filepath.Join(parent, "no", "such") }, ErrInvalidOptions, "does not exist"},
		{"not a core checkout", func(o *Options) { o.Lang, o.CoreDir = Go, parent }, ErrInvalidOptions, "has no go.mod"},
		{"sdk for go", func(o *Options) { o.Lang, o.SDK = Go, true }, ErrInvalidOptions, "--sdk is for"},
		{"sdk for rust", func(o *Options) { o.Lang, o.SDK = Rust, true }, ErrInvalidOptions, "the rust template needs no vendored SDK"},
		{"missing cargo registry", func(o *Options) { o.Lang, o.CargoRegistry = Rust, filepath.Join(parent, "nope") }, ErrInvalidOptions, "librust-serde-json-dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			o.Dir = filepath.Join(parent, "out")
			tc.edit(&o)
			r, err := New(o)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("New = %v, %v; want %v with %q", r, err, tc.want, tc.text)
			}
			ents, _ := os.ReadDir(parent)
			if len(ents) != 1 || ents[0].Name() != "taken" {
				t.Fatalf("New wrote something: %v", ents)
			}
			if sub, _ := os.ReadDir(filepath.Join(parent, "taken")); len(sub) != 0 {
				t.Fatalf("New wrote into the existing directory: %v", sub)
			}
		})
	}
}

// TestGoModuleReplaceFollowsTheCheckout: inside a yolop checkout the Go
// package replaces yolop.dev/core with the checkout's core by a relative
// path and carries its go.sum, with nothing vendored (outside one:
// TestGoOutsideACheckoutVendorsTheCore).
func TestGoModuleReplaceFollowsTheCheckout(t *testing.T) {
	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "go.work"), []byte("go 1.26\n\nuse ./core\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, "core"), 0o755)
	os.WriteFile(filepath.Join(repo, "core", "go.mod"), []byte("module yolop.dev/core\n\ngo 1.26\n\nrequire github.com/hashicorp/go-hclog v1.6.3\n\nrequire (\n\tgolang.org/x/sys v0.1.0 // indirect\n)\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "core", "go.sum"), []byte("github.com/hashicorp/go-hclog v1.6.3 h1:x\n"), 0o644)
	os.MkdirAll(filepath.Join(repo, "exts"), 0o755)

	r, err := New(Options{Name: "inside", Lang: Go, Tools: []string{"t"}, Dir: filepath.Join(repo, "exts", "inside")})
	if err != nil {
		t.Fatal(err)
	}
	mod, _ := os.ReadFile(filepath.Join(r.Dir, "go.mod"))
	for _, want := range []string{"module yolop-extension-inside\n", "require yolop.dev/core v0.0.0\n", "\tgithub.com/hashicorp/go-hclog v1.6.3 // indirect\n",
		"\tgolang.org/x/sys v0.1.0 // indirect\n", "replace yolop.dev/core => ../../core\n"} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
	if sum, _ := os.ReadFile(filepath.Join(r.Dir, "go.sum")); string(sum) != "github.com/hashicorp/go-hclog v1.6.3 h1:x\n" {
		t.Errorf("go.sum = %q", sum)
	}
	if len(r.Build) != 1 || r.Build[0].String() != "GOWORK=off go build -o bin/yolop-extension-inside ." {
		t.Errorf("build = %v", r.Build)
	}

	if _, err := os.Stat(filepath.Join(r.Dir, CoreVendorDir)); err == nil {
		t.Errorf("a package inside a checkout has a vendored %s", CoreVendorDir)
	}
}

// TestResultText names the seams and the exact next commands.
func TestResultText(t *testing.T) {
	r, err := New(Options{Name: "demo", Lang: Rust, Tools: []string{"hello"}, Commands: []string{"go-now"}, Dir: filepath.Join(t.TempDir(), "my demo")})
	if err != nil {
		t.Fatal(err)
	}
	text := r.Text()
	for _, want := range []string{
		"scaffolded extension demo (rust)",
		"src/main.rs  handle_tool_hello: the tool hello",
		"src/main.rs  handle_command_go_now: the slash command /demo:go-now",
		"(cd '" + r.Dir + "' && cargo install --path . --root . --no-track --quiet)",
		"yolop ext install '" + r.Dir + "' --yes",
		"yolop ext doctor demo",
		"yolop ext enable demo",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("Text lacks %q:\n%s", want, text)
		}
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"Server":"bin/yolop-extension-demo"`) {
		t.Errorf("JSON: %s", b)
	}
}

// TestRunBuildReportsTheFailingStep: a failing step names the command and
// shows its output.
func TestRunBuildReportsTheFailingStep(t *testing.T) {
	need(t, "sh", "a POSIX shell")
	r := &Result{Build: []Step{{Dir: t.TempDir(), Args: []string{"sh", "-c", "echo compiling; echo broken >&2; exit 3"}}}}
	var out bytes.Buffer
	err := r.RunBuild(t.Context(), &out)
	if !errors.Is(err, ErrBuild) || !strings.Contains(err.Error(), "`sh -c 'echo compiling; echo broken >&2; exit 3'`") || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("RunBuild = %v", err)
	}
	if !strings.Contains(out.String(), "compiling") {
		t.Fatalf("output = %q", out.String())
	}
	// An offline failure names the way round it.
	for lang, want := range map[string]string{Rust: "--cargo-registry /usr/share/cargo/registry"} {
		off := &Result{Lang: lang, Build: []Step{{Dir: t.TempDir(), Args: []string{"sh", "-c", "exit 101"}}}}
		if err := off.RunBuild(t.Context(), nil); !errors.Is(err, ErrBuild) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s build failure: %v; want a hint with %q", lang, err, want)
		}
	}
	r.Build[0].Args = []string{"no-such-build-tool-xyz"}
	if err := r.RunBuild(t.Context(), nil); !errors.Is(err, ErrBuild) || !strings.Contains(err.Error(), "not installed or not on PATH") {
		t.Fatalf("a missing tool: %v", err)
	}
}

// TestNothingAskedGetsTheDefaultTool: a package asked for no facet gets
// the hello tool (a first `yolop ext new demo --lang python` works), with
// its manifest entry, example and seam; an ask or status opt-in alone
// contributes nothing either, so it gets the tool too.
func TestNothingAskedGetsTheDefaultTool(t *testing.T) {
	for _, o := range []Options{{Lang: Python}, {Lang: TypeScript, Status: true}, {Lang: Python, Ask: true, Config: true}} {
		o.Name = "demo"
		o.Dir = filepath.Join(t.TempDir(), "demo")
		r, err := New(o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		checkManifest(t, r, Options{Name: "demo", Lang: o.Lang, Tools: []string{DefaultTool}, Status: o.Status, Ask: o.Ask, Config: o.Config})
		if len(r.Seams) == 0 || r.Seams[0].Func != "handle_tool_hello" {
			t.Errorf("%+v: seams %+v, want handle_tool_hello first", o, r.Seams)
		}
	}
	// A hook alone contributes: no tool is added.
	r, err := New(Options{Name: "guard", Lang: Python, Hooks: []string{"pre_tool_use"}, Dir: filepath.Join(t.TempDir(), "guard")})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Seams {
		if strings.HasPrefix(s.Func, "handle_tool_") {
			t.Errorf("a hook-only package got a tool seam %s", s.Func)
		}
	}
}
