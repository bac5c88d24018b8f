package packaging

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"yolop.dev/core/host"
	"yolop.dev/core/skill"
	"yolop.dev/core/yep"
)

//go:embed plugin.schema.json
var schemaJSON []byte

// SchemaJSON returns (a copy of) the published manifest JSON Schema (Draft
// 2020-12): the same bytes as schema/manifest/v1/plugin.schema.json in the
// repository.
func SchemaJSON() []byte { return bytes.Clone(schemaJSON) }

const schemaURL = "https://yolop.dev/schema/manifest/v1/plugin.schema.json"

// compiledSchema compiles the embedded schema once; the result is immutable.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("embedded manifest schema: %w", err)
	}
	c := newCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("embedded manifest schema: %w", err)
	}
	return c.Compile(schemaURL)
})

// newCompiler returns a 2020-12 compiler that never loads anything from the
// file system or the network.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{})
	return c
}

var (
	identRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	slugRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	protoRE   = regexp.MustCompile(`^([0-9]+)\.([0-9]+)$`)
)

// SupportedProtocolMajor is the YEP major this host speaks: a manifest
// declaring another is refused. It is [yep.ProtocolMajor].
const SupportedProtocolMajor = yep.ProtocolMajor

// MaxHookSubscriptions is the largest accepted number of hooks[]: the
// host's cap per extension, [host.MaxHookSubscriptions]. A manifest over
// it is refused at install rather than clamped when it runs.
const MaxHookSubscriptions = host.MaxHookSubscriptions

// MCPToolPrefix starts the name of every MCP server's tool in a session
// (mcp__<server>__<tool>). A manifest may not declare a tool with it, in
// any case: it could take over calls meant for a server's tool.
const MCPToolPrefix = "mcp__"

// MaxHookTimeoutMS is the largest accepted hooks[].timeout_ms.
const MaxHookTimeoutMS = 60000

// MaxToolTimeoutMS is the largest accepted tools[].timeout_ms: one day.
const MaxToolTimeoutMS = 24 * 60 * 60 * 1000

// DefaultToolTimeoutMS is the limit the host applies to a call of a tool
// without timeout_ms when the session sets none, [yep.DefaultToolTimeout]
// in milliseconds. The consent diff measures a changed timeout against it.
const DefaultToolTimeoutMS = int(yep.DefaultToolTimeout / time.Millisecond)

// parseManifest validates doc (plugin.json bytes) against the schema and the
// semantic rules. prefix is prepended to field paths ("package.metadata."
// for Cargo.toml).
func parseManifest(data []byte, root, file, prefix string, o LoadOptions) (*Manifest, error) {
	fail := func(format string, args ...any) error {
		return &ManifestError{File: file, Problems: []string{fmt.Sprintf(format, args...)}}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fail("not valid JSON: %v", err)
	}
	sch, err := compiledSchema()
	if err != nil {
		return nil, err
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, fail("%v", err)
		}
		return nil, &ManifestError{File: file, Problems: schemaProblems(ve, inst, prefix)}
	}
	exact, err := json.Marshal(exactKeys(inst, reflect.TypeFor[Manifest]()))
	if err != nil {
		return nil, fail("%v", err)
	}
	var m Manifest
	if err := json.Unmarshal(exact, &m); err != nil {
		return nil, fail("%v", err)
	}
	m.Dir, m.File = root, file
	v := &checker{root: root, prefix: prefix, max: o.maxBytes(), m: &m}
	v.check()
	if len(v.errs) > 0 {
		return nil, &ManifestError{File: file, Problems: v.errs, kinds: v.kinds}
	}
	return &m, nil
}

// A ManifestError lists every problem found in one manifest, each naming
// the field path ("yolop.tools[2].name: ...") and what was expected. It
// matches [ErrInvalidManifest] and, where they apply, [ErrUnsupportedProtocol],
// [ErrEscapesPackage], [ErrDuplicateName] and [ErrManifestTooLarge] with
// errors.Is.
type ManifestError struct {
	File     string
	Problems []string
	kinds    []error
}

func (e *ManifestError) Error() string {
	return fmt.Sprintf("%s: invalid extension manifest: %s", e.File, strings.Join(e.Problems, "; "))
}

// Unwrap returns ErrInvalidManifest and the specific sentinels.
func (e *ManifestError) Unwrap() []error { return append([]error{ErrInvalidManifest}, e.kinds...) }

// schemaProblems renders the leaf validation errors as
// "field.path[2].name: what was expected" lines.
func schemaProblems(ve *jsonschema.ValidationError, inst any, prefix string) []string {
	return schemaProblemsRedacting(ve, inst, prefix, nil)
}

// schemaProblemsRedacting is [schemaProblems] that never describes the
// value of a top-level field named in secret: a message such as
// "minLength: got 5, want 8" would tell the length of a secret, and enum,
// const and pattern messages quote it. Such a field gets the failed rule's
// keyword only.
func schemaProblemsRedacting(ve *jsonschema.ValidationError, inst any, prefix string, secret map[string]bool) []string {
	p := message.NewPrinter(language.English)
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			where := fieldPath(e.InstanceLocation, inst, prefix)
			if len(e.InstanceLocation) > 0 && secret[e.InstanceLocation[0]] {
				rule := strings.Join(e.ErrorKind.KeywordPath(), "/")
				if rule == "" {
					rule = "schema"
				}
				out = append(out, where+": the secret value does not satisfy the "+rule+" rule (the value is never shown)")
				return
			}
			out = append(out, where+": "+e.ErrorKind.LocalizedString(p))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(out)
	return slices.Compact(out)
}

// fieldPath renders instance-location tokens as a dotted path with [i]
// array indexes, walking inst to tell arrays from objects.
func fieldPath(tokens []string, inst any, prefix string) string {
	var b strings.Builder
	cur := inst
	for _, t := range tokens {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + t + "]")
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		case map[string]any:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(t)
			cur = c[t]
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(t)
			cur = nil
		}
	}
	if b.Len() == 0 {
		return "(manifest)"
	}
	s := b.String()
	if prefix != "" && (s == "yolop" || strings.HasPrefix(s, "yolop.") || strings.HasPrefix(s, "yolop[")) {
		s = prefix + s
	}
	return s
}

// checker applies the semantic rules the schema cannot express.
type checker struct {
	root, prefix string
	max          int64
	m            *Manifest
	errs         []string
	kinds        []error
}

func (c *checker) errf(kind error, field, format string, args ...any) {
	c.errs = append(c.errs, c.prefix+field+": "+fmt.Sprintf(format, args...))
	if kind != nil && !slices.Contains(c.kinds, kind) {
		c.kinds = append(c.kinds, kind)
	}
}

func (c *checker) check() {
	f := c.m.Yolop
	if f == nil {
		return
	}
	c.checkProtocol(f.ProtocolVersion)
	needsServer := []string{}
	if f.CapabilityServer != nil {
		c.checkServer(f.CapabilityServer)
	}
	c.checkSandbox(f)
	c.checkConfigSchema(f)

	seen := map[string]int{}
	never := 0
	for i, t := range f.Tools {
		field := fmt.Sprintf("yolop.tools[%d].name", i)
		if !identRE.MatchString(t.Name) {
			c.errf(nil, field, "%q is not a valid tool name (want a letter or '_' then letters, digits, '_', at most 64)", t.Name)
		}
		if strings.HasPrefix(strings.ToLower(t.Name), MCPToolPrefix) {
			c.errf(nil, field, "%q starts with %q, which is reserved for MCP servers' tools (mcp__<server>__<tool>); rename the tool", t.Name, MCPToolPrefix)
		}
		if j, dup := seen[t.Name]; dup {
			c.errf(ErrDuplicateName, field, "tool %q is already declared at yolop.tools[%d]", t.Name, j)
		} else {
			seen[t.Name] = i
		}
		if t.NeverDefer {
			never++
		}
		if t.TimeoutMS < 0 || t.TimeoutMS > MaxToolTimeoutMS {
			c.errf(nil, fmt.Sprintf("yolop.tools[%d].timeout_ms", i), "%d is outside 1..%d (absent means the host default)", t.TimeoutMS, MaxToolTimeoutMS)
		}
		if len(t.InputSchema) > 0 {
			// Arguments are validated against it before every call.
			if _, err := compileToolSchema(t.InputSchema); err != nil {
				c.errf(nil, fmt.Sprintf("yolop.tools[%d].input_schema", i), "%v", err)
			}
		}
	}
	if never > yep.MaxNeverDefer {
		c.m.Warnings = append(c.m.Warnings, fmt.Sprintf("%d tools are never_defer; the host loads at most %d eagerly and defers the rest behind tool_search", never, yep.MaxNeverDefer))
	}
	if len(f.Tools) > 0 {
		needsServer = append(needsServer, "tools")
	}

	if n := len(f.Hooks); n > MaxHookSubscriptions {
		c.errf(nil, "yolop.hooks", "%d subscriptions, but the host serves at most %d per extension; merge subscriptions with a matcher glob", n, MaxHookSubscriptions)
	}
	hooks := map[string]int{}
	for i, h := range f.Hooks {
		base := fmt.Sprintf("yolop.hooks[%d]", i)
		if !slices.Contains(yep.HookEvents, h.Event) {
			c.errf(nil, base+".event", "unknown hook event %q (want one of %s)", h.Event, strings.Join(yep.HookEvents, ", "))
		}
		if h.OnError != "" && !slices.Contains(yep.HookOnErrors, h.OnError) {
			c.errf(nil, base+".on_error", "%q is not %s", h.OnError, strings.Join(yep.HookOnErrors, " or "))
		}
		if h.TimeoutMS < 0 || h.TimeoutMS > MaxHookTimeoutMS {
			c.errf(nil, base+".timeout_ms", "%d is outside 1..%d (0 or absent means the host default)", h.TimeoutMS, MaxHookTimeoutMS)
		}
		if _, err := path.Match(h.Matcher, "x"); err != nil || h.Matcher == "" {
			c.errf(nil, base+".matcher", "%q is not a valid tool-name glob", h.Matcher)
		}
		if h.Matcher != "*" && h.Matcher != "" && strings.Trim(h.Matcher, "*") == "" {
			c.errf(nil, base+".matcher", "%q matches every tool; spell match-all as \"*\" so it is called out at approval", h.Matcher)
		}
		key := h.Event + " " + h.Matcher
		if j, dup := hooks[key]; dup {
			c.errf(ErrDuplicateName, base, "duplicate subscription %s %q (already at yolop.hooks[%d])", h.Event, h.Matcher, j)
		} else {
			hooks[key] = i
		}
	}
	if len(f.Hooks) > 0 {
		needsServer = append(needsServer, "hooks")
	}

	mcp := map[string]int{}
	for i, s := range f.MCPServers {
		base := fmt.Sprintf("yolop.mcpServers[%d]", i)
		if j, dup := mcp[s.Name]; dup {
			c.errf(ErrDuplicateName, base+".name", "MCP server %q is already declared at yolop.mcpServers[%d]", s.Name, j)
		} else {
			mcp[s.Name] = i
		}
		switch s.Type {
		case yep.MCPStdio:
			c.checkCommand(base+".command", s.Command, false)
			c.checkArgs(base+".args", s.Args)
		case yep.MCPHTTP:
		default:
			c.errf(nil, base+".type", "%q is not %s", s.Type, strings.Join(yep.MCPTransports, " or "))
		}
	}

	cmds := map[string]int{}
	for i, cm := range f.Commands {
		field := fmt.Sprintf("yolop.commands[%d].name", i)
		if !slugRE.MatchString(cm.Name) {
			c.errf(nil, field, "%q is not a valid command name", cm.Name)
		}
		if j, dup := cmds[cm.Name]; dup {
			c.errf(ErrDuplicateName, field, "command %q is already declared at yolop.commands[%d]", cm.Name, j)
		} else {
			cmds[cm.Name] = i
		}
	}
	if len(f.Commands) > 0 {
		needsServer = append(needsServer, "commands")
	}

	if p := f.Prompt; p != nil {
		if p.File != "" {
			text, rel, err := c.readInside(p.File)
			if err != nil {
				c.errf(errKind(err), "yolop.prompt.file", "%v", err)
			} else {
				p.Text, p.File = string(text), rel
			}
		}
		if p.MaxBytes < 0 {
			c.errf(nil, "yolop.prompt.max_bytes", "must not be negative")
		}
		if p.MaxBytes > 0 && len(p.Text) > p.MaxBytes {
			c.errf(nil, "yolop.prompt", "static text is %d bytes, more than max_bytes %d", len(p.Text), p.MaxBytes)
		}
		if p.Dynamic {
			needsServer = append(needsServer, "prompt.dynamic")
		}
	}
	for _, o := range []struct {
		on   bool
		name string
	}{{f.Status, yep.CapStatus}, {f.UIAsk, yep.CapUIAsk}, {f.Trace, yep.CapTrace}} {
		if o.on {
			needsServer = append(needsServer, o.name)
		}
	}
	if f.Provider != nil {
		c.checkProvider(f.Provider)
		needsServer = append(needsServer, "provider")
	}
	if f.CapabilityServer == nil && len(needsServer) > 0 {
		c.errf(nil, "yolop.capabilityServer", "missing, but %s need a capability server to serve them", strings.Join(needsServer, ", "))
	}
	if f.Skills {
		c.m.SkillPins = []SkillPin{}
		if fi, err := os.Stat(filepath.Join(c.root, "skills")); err != nil || !fi.IsDir() {
			c.m.Warnings = append(c.m.Warnings, "skills is true but the package has no skills/ directory")
		} else {
			c.checkSkills()
		}
	}
}

// checkSkills validates the frontmatter of every skills/<name>/SKILL.md
// and records the skills in Manifest.Skills, in directory order, with
// their content digests in Manifest.SkillPins. A
// SKILL.md that leaves the package, or whose frontmatter is malformed or
// names another skill than its directory, is an error.
func (c *checker) checkSkills() {
	ents, err := os.ReadDir(filepath.Join(c.root, "skills"))
	if err != nil {
		c.errf(nil, "yolop.skills", "reading skills/: %v", err)
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		rel := "skills/" + e.Name() + "/" + skill.FileName
		if _, err := os.Lstat(filepath.Join(c.root, "skills", e.Name(), skill.FileName)); err != nil {
			c.m.Warnings = append(c.m.Warnings, fmt.Sprintf("skills/%s has no %s; it contributes no skill", e.Name(), skill.FileName))
			continue
		}
		data, _, err := c.readInside(rel)
		if err != nil {
			c.errf(errKind(err), "yolop.skills", "%v", err)
			continue
		}
		meta, _, err := skill.Parse(data)
		if err == nil && meta.Name != e.Name() {
			err = fmt.Errorf("the frontmatter names skill %q but its directory is %q; they must match", meta.Name, e.Name())
		}
		if err != nil {
			c.errf(nil, "yolop.skills", "%s: %v", rel, err)
			continue
		}
		listing, err := ListDir(filepath.Join(c.root, "skills", e.Name()))
		if err != nil {
			c.errf(nil, "yolop.skills", "skills/%s: %v", e.Name(), err)
			continue
		}
		c.m.Skills = append(c.m.Skills, meta)
		c.m.SkillPins = append(c.m.SkillPins, SkillPin{Name: meta.Name, Description: meta.Description, Digest: listing.Hash()})
	}
}

func errKind(err error) error {
	for _, k := range []error{ErrEscapesPackage, ErrManifestTooLarge} {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}

func (c *checker) checkProtocol(v string) {
	mm := protoRE.FindStringSubmatch(v)
	if mm == nil {
		c.errf(nil, "yolop.protocol_version", "%q is not MAJOR.MINOR", v)
		return
	}
	if mm[1] != strconv.Itoa(yep.ProtocolMajor) {
		c.errf(ErrUnsupportedProtocol, "yolop.protocol_version", "%q has major %s, but this yolop speaks protocol major %d; install a version of the extension built for protocol %d.x or upgrade yolop", v, mm[1], yep.ProtocolMajor, yep.ProtocolMajor)
	}
}

func (c *checker) checkArgs(field string, args []string) {
	for i, a := range args {
		if strings.ContainsRune(a, 0) {
			c.errf(nil, fmt.Sprintf("%s[%d]", field, i), "contains a NUL byte")
		}
	}
}

// checkCommand enforces the command rules: a bare name (bin/ then PATH) or
// a relative path that stays inside the package, also after symlinks.
// packageOnly is false for MCP stdio commands, where bare names such as npx
// are the norm; the path rules are the same.
// checkServer checks the capability server by transport: a command for
// stdio and go-plugin, a module inside the package for wasm, and the
// sandbox fields only where they mean something.
func (c *checker) checkServer(s *ServerCommand) {
	const f = "yolop.capabilityServer"
	switch s.Transport {
	case "", "stdio", "go-plugin":
		c.checkCommand(f+".command", s.Command, true)
		for field, set := range map[string]bool{"module": s.Module != "", "fs": len(s.FS) > 0, "max_memory_mb": s.MaxMemoryMB != 0} {
			if set {
				c.errf(nil, f+"."+field, "is only for transport \"wasm\" (this server runs over %s)", s.TransportName())
			}
		}
	case "wasm":
		if s.Command != "" {
			c.errf(nil, f+".command", "a wasm server names its module instead; remove command and set module")
		}
		c.checkModule(f+".module", s.Module)
		for i, m := range s.FS {
			c.checkMount(fmt.Sprintf("%s.fs[%d]", f, i), m)
		}
		if s.MaxMemoryMB < 0 || s.MaxMemoryMB > MaxWASMMemoryMB {
			c.errf(nil, f+".max_memory_mb", "%d is out of range: 1 to %d (0 or absent means %d)", s.MaxMemoryMB, MaxWASMMemoryMB, DefaultWASMMemoryMB)
		}
	default:
		c.errf(nil, f+".transport", "%q is not a transport; want \"stdio\" (the default), \"wasm\" or \"go-plugin\"", s.Transport)
	}
	c.checkArgs(f+".args", s.Args)
}

// wasmMagic starts every WebAssembly binary module.
var wasmMagic = []byte{0x00, 'a', 's', 'm'}

// checkModule checks a wasm module path: relative, inside the package, an
// existing regular file that starts with the WebAssembly magic.
func (c *checker) checkModule(field, mod string) {
	switch {
	case mod == "":
		c.errf(nil, field, "is empty; name the .wasm file inside the package, e.g. \"server.wasm\"")
		return
	case strings.ContainsRune(mod, 0):
		c.errf(nil, field, "contains a NUL byte")
		return
	case filepath.IsAbs(mod) || strings.HasPrefix(mod, `\`):
		c.errf(ErrEscapesPackage, field, "%q is an absolute path; name a file inside the package", mod)
		return
	}
	clean := filepath.Clean(filepath.FromSlash(strings.ReplaceAll(mod, `\`, "/")))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		c.errf(ErrEscapesPackage, field, "%q leaves the package directory through '..'", mod)
		return
	}
	if err := c.resolvesInside(clean); err != nil {
		c.errf(ErrEscapesPackage, field, "%q %v", mod, err)
		return
	}
	f, err := os.Open(filepath.Join(c.root, clean))
	if err != nil {
		c.errf(nil, field, "%q: %v", mod, errors.Unwrap(err))
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		c.errf(nil, field, "%q is not a regular file", mod)
		return
	}
	head := make([]byte, len(wasmMagic))
	if n, _ := io.ReadFull(f, head); n < len(head) || !bytes.Equal(head, wasmMagic) {
		c.errf(nil, field, "%q is not a WebAssembly module (it does not start with \\0asm)", mod)
	}
}

// checkMount checks one directory a WASM guest may see.
func (c *checker) checkMount(field string, m Mount) {
	rest, ok := strings.CutPrefix(m.Path, WorkspaceVar)
	if !ok {
		rest, ok = strings.CutPrefix(m.Path, PackageVar)
	}
	switch {
	case !ok:
		c.errf(nil, field+".path", "%q must start with %s or %s: a sandboxed server sees the workspace or its own package, never other host paths", m.Path, WorkspaceVar, PackageVar)
	case rest != "" && !strings.HasPrefix(rest, "/"):
		c.errf(nil, field+".path", "%q: put a '/' after the variable", m.Path)
	case slices.Contains(strings.Split(rest, "/"), ".."):
		c.errf(ErrEscapesPackage, field+".path", "%q climbs out of its root through '..'", m.Path)
	}
	if m.Mode != "" && m.Mode != "ro" && m.Mode != "rw" {
		c.errf(nil, field+".mode", "%q is not a mode; want \"ro\" (the default) or \"rw\"", m.Mode)
	}
}

func (c *checker) checkCommand(field, cmd string, packageOnly bool) {
	switch {
	case cmd == "":
		c.errf(nil, field, "is empty")
		return
	case strings.ContainsRune(cmd, 0):
		c.errf(nil, field, "contains a NUL byte")
		return
	case strings.HasPrefix(cmd, "-"):
		c.errf(nil, field, "%q starts with '-'", cmd)
		return
	case filepath.IsAbs(cmd) || strings.HasPrefix(cmd, `\`):
		c.errf(ErrEscapesPackage, field, "%q is an absolute path; use a bare command name (looked up in the package's bin/, then PATH) or a path relative to the package", cmd)
		return
	case cmd == "." || cmd == "..":
		c.errf(ErrEscapesPackage, field, "%q is not a command", cmd)
		return
	}
	rel := cmd
	if !strings.ContainsAny(cmd, `/\`) {
		rel = filepath.Join("bin", cmd) // only checked if it exists
	}
	clean := filepath.Clean(filepath.FromSlash(strings.ReplaceAll(rel, `\`, "/")))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		c.errf(ErrEscapesPackage, field, "%q leaves the package directory through '..'", cmd)
		return
	}
	if err := c.resolvesInside(clean); err != nil {
		c.errf(ErrEscapesPackage, field, "%q %v", cmd, err)
	}
}

// resolvesInside checks that root/rel, or its deepest existing ancestor,
// resolves (following symlinks) to a path inside root.
func (c *checker) resolvesInside(rel string) error {
	p := filepath.Join(c.root, rel)
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			if !inside(c.root, real) {
				return fmt.Errorf("resolves through a symlink to %s, outside the package", real)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot be resolved: %v", err)
		}
		parent := filepath.Dir(p)
		if parent == p || !inside(c.root, parent) {
			return nil
		}
		// A dangling symlink reports ErrNotExist too: check where it points.
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			if filepath.IsAbs(target) {
				if !inside(c.root, filepath.Clean(target)) {
					return fmt.Errorf("is a symlink to %s, outside the package", target)
				}
			} else if !inside(c.root, filepath.Join(filepath.Dir(p), target)) {
				return fmt.Errorf("is a symlink to %s, outside the package", target)
			}
		}
		p = parent
	}
}

// readInside reads a package-relative file named by the manifest, refusing
// URLs, absolute paths, escapes and oversize files.
func (c *checker) readInside(name string) ([]byte, string, error) {
	if strings.Contains(name, "://") || strings.Contains(name, "#") || filepath.IsAbs(name) || strings.ContainsRune(name, 0) {
		return nil, "", fmt.Errorf("%w: %q must name a file inside the package (a relative path such as ./config.schema.json)", ErrEscapesPackage, name)
	}
	clean := filepath.Clean(filepath.FromSlash(name))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, "", fmt.Errorf("%w: %q leaves the package directory", ErrEscapesPackage, name)
	}
	full := filepath.Join(c.root, clean)
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil, "", fmt.Errorf("%q: %w", name, err)
	}
	if !inside(c.root, real) {
		return nil, "", fmt.Errorf("%w: %q resolves to %s", ErrEscapesPackage, name, real)
	}
	data, err := readCapped(c.root, real, c.max)
	if err != nil {
		return nil, "", fmt.Errorf("%q: %w", name, err)
	}
	return data, filepath.ToSlash(clean), nil
}

func (c *checker) checkConfigSchema(f *Facet) {
	raw := bytes.TrimSpace(f.ConfigSchema)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		f.ConfigSchema = nil
		return
	}
	var ref struct {
		Ref *string `json:"$ref"`
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil && len(obj) == 1 && json.Unmarshal(raw, &ref) == nil && ref.Ref != nil {
		data, rel, err := c.readInside(*ref.Ref)
		if err != nil {
			c.errf(errKind(err), "yolop.config_schema.$ref", "%v", err)
			return
		}
		if !json.Valid(data) {
			c.errf(nil, "yolop.config_schema.$ref", "%s is not valid JSON", rel)
			return
		}
		f.ConfigSchema, f.ConfigSchemaFile = json.RawMessage(data), rel
	}
	if _, err := compileConfigSchema(f.ConfigSchema); err != nil {
		c.errf(nil, "yolop.config_schema", "%v", err)
		return
	}
	fields, err := configFields(f.ConfigSchema)
	if err != nil {
		c.errf(nil, "yolop.config_schema", "%v", err)
		return
	}
	envs := map[string]string{}
	for _, fl := range fields {
		if fl.Env == "" {
			continue
		}
		if !envNameRE.MatchString(fl.Env) {
			c.errf(nil, "yolop.config_schema.properties."+fl.Name+".env", "%q is not a valid environment variable name", fl.Env)
		}
		if other, dup := envs[fl.Env]; dup {
			c.errf(ErrDuplicateName, "yolop.config_schema.properties."+fl.Name+".env", "%q is already used by field %q", fl.Env, other)
		}
		envs[fl.Env] = fl.Name
	}
}

// cargoToPlugin turns a Cargo.toml with [package.metadata.yolop] into
// plugin.json bytes: name (without the yolop-extension- prefix), version and
// description from [package], the facet from the metadata table.
func cargoToPlugin(data []byte) ([]byte, error) {
	var doc struct {
		Package struct {
			Name        any            `toml:"name"`
			Version     any            `toml:"version"`
			Description any            `toml:"description"`
			Metadata    map[string]any `toml:"metadata"`
		} `toml:"package"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	facet, ok := doc.Package.Metadata["yolop"]
	if !ok {
		return nil, fmt.Errorf("%w: Cargo.toml has no [package.metadata.yolop] table (and there is no plugin.json)", ErrNoManifest)
	}
	out := map[string]any{"yolop": facet}
	if s, ok := doc.Package.Name.(string); ok {
		out["name"] = strings.TrimPrefix(s, "yolop-extension-")
	} else if doc.Package.Name != nil {
		out["name"] = doc.Package.Name
	}
	for k, v := range map[string]any{"version": doc.Package.Version, "description": doc.Package.Description} {
		if v != nil {
			out[k] = v // a {workspace = true} table fails the schema with a clear path
		}
	}
	return json.Marshal(out)
}
