package scaffold

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"yolop.dev/core"
	"yolop.dev/core/skill"
	"yolop.dev/core/yep"
)

// The manifest's naming rules (packaging/plugin.schema.json).
var (
	extNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	toolRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	commandRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
)

// DefaultHookMatcher is the tool-name glob of a hook given without one:
// the shell tool, what a guard hook is usually about.
const DefaultHookMatcher = "bash"

// Version is the version a scaffolded package starts at.
const Version = "0.1.0"

// CoreVendorDir is the package-relative directory a Go package
// scaffolded outside a yolop checkout (and with no [Options.CoreDir])
// carries the SDK in: the source of yolop.dev/core this binary was built
// from ([core.Source], without its tests), which go.mod replaces
// yolop.dev/core with. The SDK is not published, so this is what lets the
// package build with Go and the module proxy alone.
const CoreVendorDir = "lib/yolop-core"

// ConfigField is the optional config field a package scaffolded with
// Options.Config declares.
const ConfigField = "greeting"

// spec is validated options with everything the templates need.
type spec struct {
	Name, Lang, Version string
	Description         string
	Binary              string // yolop-extension-<name>
	Tools               []toolSpec
	Hooks               []hookSpec
	Events              []eventSpec // one handler per event
	Prompt              bool
	PromptText          string
	Dynamic             bool
	Commands            []commandSpec
	Status, Ask, Config bool
	ConfigField         string
	Skills              bool
	SkillName           string
	// SDK: the server is written on the vendored SDK (Python, TypeScript).
	SDK bool
	// Go: the replace target and the SDK's requirements; CoreVendor
	// means the target is CoreVendorDir, written from core.Source.
	CoreReplace  string
	CoreVendor   bool
	CoreRequires []string // "path version" of the SDK's own requirements
	CoreSum      []byte
	GoDirective  string
	// Rust: a directory source for crates.io, or "".
	CargoRegistry string
}

type toolSpec struct {
	Name, Func string
	NeverDefer bool
}

type hookSpec struct {
	Event, Matcher, Func string
}

type eventSpec struct {
	Event, Func string
}

type commandSpec struct {
	Name, Func, Description string
}

// newSpec validates o. Nothing touches the file system.
func newSpec(o Options) (*spec, error) {
	if !extNameRE.MatchString(o.Name) {
		return nil, fmt.Errorf("%w: extension name %q: use lowercase letters, digits, '-' and '_', starting with a letter or digit, at most 64", ErrInvalidName, o.Name)
	}
	if !slices.Contains(Langs, o.Lang) {
		return nil, fmt.Errorf("%w %q: choose one of %s", ErrUnknownLang, o.Lang, strings.Join(Langs, ", "))
	}
	sp := &spec{
		Name: o.Name, Lang: o.Lang, Version: Version,
		Description: fmt.Sprintf("The %s extension (scaffolded by `yolop ext new`; describe what it does here).", o.Name),
		Binary:      "yolop-extension-" + o.Name,
		Prompt:      o.Prompt, Dynamic: o.DynamicPrompt,
		Status: o.Status, Ask: o.Ask, Config: o.Config, Skills: o.Skills,
		ConfigField: ConfigField,
	}
	if o.SDK {
		if _, ok := vendoredSDKs[o.Lang]; !ok {
			return nil, fmt.Errorf("%w: --sdk is for %s; the %s template needs no vendored SDK", ErrInvalidOptions, strings.Join(sdkLangs(), " and "), o.Lang)
		}
		sp.SDK = true
	}
	funcs := map[string]string{} // generated function name → what it serves
	claim := func(fn, what string) error {
		if prev, dup := funcs[fn]; dup {
			return fmt.Errorf("%w: %s and %s would both be served by %s; rename one", ErrInvalidOptions, prev, what, fn)
		}
		funcs[fn] = what
		return nil
	}

	if len(o.Tools) == 0 && len(o.Hooks) == 0 && len(o.Commands) == 0 && !o.Prompt && !o.DynamicPrompt {
		// A package must contribute something; asked for nothing, it
		// gets the one tool a first extension wants to see working.
		o.Tools = []string{DefaultTool}
	}
	for _, name := range o.Tools {
		if !toolRE.MatchString(name) {
			return nil, fmt.Errorf("%w: tool name %q: want a letter or '_' then letters, digits or '_', at most 64", ErrInvalidName, name)
		}
		if slices.ContainsFunc(sp.Tools, func(t toolSpec) bool { return t.Name == name }) {
			return nil, fmt.Errorf("%w: tool %q is named twice", ErrInvalidOptions, name)
		}
		t := toolSpec{Name: name, Func: sp.funcName("tool", name), NeverDefer: len(sp.Tools) < yep.MaxNeverDefer}
		if err := claim(t.Func, "tool "+name); err != nil {
			return nil, err
		}
		sp.Tools = append(sp.Tools, t)
	}

	for _, h := range o.Hooks {
		event, matcher, ok := strings.Cut(h, ":")
		if !ok {
			matcher = DefaultHookMatcher
		}
		if !slices.Contains(yep.HookEvents, event) {
			return nil, fmt.Errorf("%w event %q: choose %s, optionally with a tool-name glob (pre_tool_use:git*)", ErrUnknownHook, event, strings.Join(yep.HookEvents, " or "))
		}
		if _, err := path.Match(matcher, "x"); err != nil || matcher == "" || (matcher != "*" && strings.Trim(matcher, "*") == "") {
			return nil, fmt.Errorf("%w: matcher %q of %s is not a tool-name glob (spell match-all as \"*\")", ErrUnknownHook, matcher, event)
		}
		if slices.ContainsFunc(sp.Hooks, func(k hookSpec) bool { return k.Event == event && k.Matcher == matcher }) {
			return nil, fmt.Errorf("%w: hook %s:%s is named twice", ErrInvalidOptions, event, matcher)
		}
		fn := sp.funcName("hook", event)
		if !slices.ContainsFunc(sp.Events, func(e eventSpec) bool { return e.Event == event }) {
			if err := claim(fn, "hook "+event); err != nil {
				return nil, err
			}
			sp.Events = append(sp.Events, eventSpec{Event: event, Func: fn})
		}
		sp.Hooks = append(sp.Hooks, hookSpec{Event: event, Matcher: matcher, Func: fn})
	}

	for _, name := range o.Commands {
		if !commandRE.MatchString(name) {
			return nil, fmt.Errorf("%w: command name %q: use lowercase letters, digits, '-' and '_', starting with a letter or digit, at most 64", ErrInvalidName, name)
		}
		if slices.ContainsFunc(sp.Commands, func(c commandSpec) bool { return c.Name == name }) {
			return nil, fmt.Errorf("%w: command %q is named twice", ErrInvalidOptions, name)
		}
		c := commandSpec{Name: name, Func: sp.funcName("command", name), Description: fmt.Sprintf("Run %s: /%s:%s [arguments]", name, o.Name, name)}
		if err := claim(c.Func, "command "+name); err != nil {
			return nil, err
		}
		sp.Commands = append(sp.Commands, c)
	}

	if sp.Prompt {
		sp.PromptText = fmt.Sprintf("The %s extension is installed.", o.Name)
		if len(sp.Tools) > 0 {
			var names []string
			for _, t := range sp.Tools {
				names = append(names, t.Name)
			}
			sp.PromptText += fmt.Sprintf(" Its tools: %s.", strings.Join(names, ", "))
		}
	}
	if sp.Skills {
		sp.SkillName = skillName(o.Name)
		if err := skill.ValidName(sp.SkillName); err != nil {
			return nil, fmt.Errorf("%w: extension name %q makes no skill name (%v); name the extension with letters and digits between single '-'", ErrInvalidName, o.Name, err)
		}
	}
	if o.CoreDir != "" && o.Lang != Go {
		return nil, fmt.Errorf("%w: a core directory is for --lang go only", ErrInvalidOptions)
	}
	if o.CargoRegistry != "" && o.Lang != Rust {
		return nil, fmt.Errorf("%w: a cargo registry is for --lang rust only", ErrInvalidOptions)
	}
	return sp, nil
}

// skillName makes a skill name from an extension name: '_' becomes '-'.
func skillName(ext string) string {
	s := strings.ReplaceAll(ext, "_", "-")
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	return strings.Trim(s, "-")
}

// funcName is the handler of a tool, hook event or command in the
// template's language: handle_<kind>_<name> (hooks: handle_<event>) in
// snake case, or handle<Kind><Name> in Go.
func (sp *spec) funcName(kind, name string) string {
	if sp.Lang == Go {
		if kind == "hook" {
			return "handle" + camel(name)
		}
		return "handle" + camel(kind) + camel(name)
	}
	name = strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	if kind == "hook" {
		return "handle_" + name
	}
	return "handle_" + kind + "_" + name
}

// camel turns snake_case or kebab-case into CamelCase.
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	if b.Len() == 0 {
		return "X"
	}
	return b.String()
}

// serverFile is the package-relative file holding the seams.
func (sp *spec) serverFile() string {
	switch sp.Lang {
	case Go:
		return "main.go"
	case Rust:
		return "src/main.rs"
	}
	return "bin/" + sp.Binary
}

// seams lists the functions the author fills in.
func (sp *spec) seams() []Seam {
	f := sp.serverFile()
	var out []Seam
	for _, t := range sp.Tools {
		out = append(out, Seam{File: f, Func: t.Func, What: "the tool " + t.Name})
	}
	for _, e := range sp.Events {
		var ms []string
		for _, h := range sp.Hooks {
			if h.Event == e.Event {
				ms = append(ms, h.Matcher)
			}
		}
		out = append(out, Seam{File: f, Func: e.Func, What: fmt.Sprintf("the %s hook on tools matching %s (allow, block or mutate)", e.Event, strings.Join(ms, ", "))})
	}
	if sp.Dynamic {
		out = append(out, Seam{File: f, Func: sp.named("handle_prompt", "handlePrompt"), What: "this turn's system-prompt text"})
	}
	for _, c := range sp.Commands {
		out = append(out, Seam{File: f, Func: c.Func, What: fmt.Sprintf("the slash command /%s:%s", sp.Name, c.Name)})
	}
	if sp.Config {
		out = append(out, Seam{File: f, Func: sp.named("handle_config", "handleConfig"), What: "a new config (initialize and config/changed)"})
	}
	if sp.Status && sp.Lang != Go {
		out = append(out, Seam{File: f, Func: sp.named("handle_initialized", ""), What: "the handshake is done (the status is set here)"})
	}
	return out
}

func (sp *spec) named(snake, goName string) string {
	if sp.Lang == Go {
		return goName
	}
	return snake
}

type buildStep struct {
	args []string
	env  []string
}

// buildSteps are the commands that put the server in bin/.
func (sp *spec) buildSteps() []buildStep {
	switch sp.Lang {
	case Go:
		return []buildStep{{args: []string{"go", "build", "-o", "bin/" + sp.Binary, "."}, env: []string{"GOWORK=off"}}}
	case Rust:
		return []buildStep{{args: []string{"cargo", "install", "--path", ".", "--root", ".", "--no-track", "--quiet"}}}
	}
	return nil
}

// resolveCore sets the Go SDK's replace target: explicit, or the core/ of
// the yolop checkout holding dir, or else the SDK this binary carries
// (core.Source), vendored under CoreVendorDir. It reads that module's
// requirements and go.sum so the package builds with no tidying.
func (sp *spec) resolveCore(explicit, dir string) error {
	sp.GoDirective = "1.26"
	src := explicit
	rel := false
	if src == "" {
		src = findCheckoutCore(filepath.Dir(dir))
		rel = src != ""
	}
	var fsys fs.FS = core.Source
	sp.CoreReplace, sp.CoreVendor = "./"+CoreVendorDir, true
	where := "the SDK built into yolop"
	if src != "" {
		abs, err := filepath.Abs(src)
		if err != nil {
			return fmt.Errorf("scaffold %s: core directory: %w", sp.Name, err)
		}
		fsys, where = os.DirFS(abs), "core directory "+abs
		sp.CoreReplace, sp.CoreVendor = abs, false
		if rel {
			if r, err := filepath.Rel(dir, abs); err == nil {
				sp.CoreReplace = filepath.ToSlash(r)
			}
		}
	}
	mod, err := fs.ReadFile(fsys, "go.mod")
	if err != nil {
		return fmt.Errorf("%w: %s has no go.mod: %v", ErrInvalidOptions, where, err)
	}
	modPath, goLine, reqs := parseGoMod(mod)
	if modPath != "yolop.dev/core" {
		return fmt.Errorf("%w: %s holds module %q, not yolop.dev/core; point at the core/ directory of a yolop checkout", ErrInvalidOptions, where, modPath)
	}
	sum, err := fs.ReadFile(fsys, "go.sum")
	if err != nil {
		return fmt.Errorf("%w: %s has no go.sum: %v", ErrInvalidOptions, where, err)
	}
	if goLine != "" {
		sp.GoDirective = goLine
	}
	sp.CoreRequires, sp.CoreSum = reqs, sum
	return nil
}

// coreFiles are the files of the vendored SDK: core.Source without its
// tests, under CoreVendorDir.
func coreFiles() ([]file, error) {
	var out []file
	err := fs.WalkDir(core.Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := fs.ReadFile(core.Source, p)
		if err != nil {
			return err
		}
		out = append(out, file{path: path.Join(CoreVendorDir, p), data: b, mode: 0o644})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scaffold: the SDK built into yolop: %w", err)
	}
	return out, nil
}

// findCheckoutCore walks up from dir to a yolop checkout (a go.work beside
// a core/go.mod of module yolop.dev/core) and returns its core/, or "".
func findCheckoutCore(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			if mod, err := os.ReadFile(filepath.Join(d, "core", "go.mod")); err == nil {
				if p, _, _ := parseGoMod(mod); p == "yolop.dev/core" {
					return filepath.Join(d, "core")
				}
			}
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// parseGoMod reads the module path, the go directive and the "path
// version" requirements of a go.mod: enough to copy the SDK's
// requirements, not a general parser.
func parseGoMod(data []byte) (module, goLine string, reqs []string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	inReq := false
	for sc.Scan() {
		l := sc.Text()
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case inReq && f[0] == ")":
			inReq = false
		case inReq && len(f) == 2:
			reqs = append(reqs, f[0]+" "+f[1])
		case f[0] == "module" && len(f) == 2:
			module = strings.Trim(f[1], `"`)
		case f[0] == "go" && len(f) == 2:
			goLine = f[1]
		case f[0] == "require" && len(f) == 2 && f[1] == "(":
			inReq = true
		case f[0] == "require" && len(f) == 3:
			reqs = append(reqs, f[1]+" "+f[2])
		}
	}
	return module, goLine, reqs
}
