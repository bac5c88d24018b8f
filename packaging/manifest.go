package packaging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"yolop.dev/core/skill"
	"yolop.dev/core/yep"
)

// DefaultMaxManifestBytes is the size cap [Load] applies to a manifest and to
// each file it references (config schema $ref, prompt file) unless
// [LoadOptions] says otherwise. A larger file is refused without being read.
const DefaultMaxManifestBytes = 1 << 20

// MaxNeverDefer is the number of never_defer tools the host loads eagerly per
// extension (spec D6); more are accepted with a warning and deferred.
//
// Deprecated: use [yep.MaxNeverDefer], which this is.
const MaxNeverDefer = yep.MaxNeverDefer

// A Manifest is a package's plugin.json (or Cargo.toml metadata): its
// identity plus, in Yolop, everything the capability server may contribute.
// Unknown JSON fields are ignored for forward compatibility.
type Manifest struct {
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description,omitempty"`
	Engines     map[string]string `json:"engines,omitempty"`
	// Yolop is the yolop facet; nil means a plain plugin with no capability
	// server.
	Yolop *Facet `json:"yolop,omitempty"`

	// Dir is the package directory the manifest was read from (absolute,
	// symlinks resolved).
	Dir string `json:"-"`
	// File is the manifest file that was read: Dir/plugin.json or
	// Dir/Cargo.toml.
	File string `json:"-"`
	// Warnings lists non-fatal findings (e.g. more than yep.MaxNeverDefer
	// never_defer tools) for the CLI to show.
	Warnings []string `json:"-"`
	// Skills are the skills the package ships when its facet declares
	// skills: the validated frontmatter of each skills/<name>/SKILL.md, in
	// directory order.
	Skills []skill.Meta `json:"-"`
	// SkillPins pin the skills in Skills by content digest, in the same
	// order: what an approval records. It is non-nil (possibly empty)
	// whenever the facet declares skills; nil for a manifest without
	// skills, and for an approved manifest whose lock entry predates
	// skill pins (see [LockEntry.Skills]).
	SkillPins []SkillPin `json:"-"`
	// Declarative is what a package without a yolop facet (a Claude Code
	// plugin) contributes through the declarative path; nil for a package
	// with a facet. It is read from the package's files on every load.
	Declarative *Declarative `json:"declarative,omitempty"`
}

// A Facet is the `yolop` block of a manifest.
type Facet struct {
	// ProtocolVersion is "MAJOR.MINOR"; only major yep.ProtocolMajor is
	// accepted.
	ProtocolVersion string `json:"protocol_version"`
	// CapabilityServer is the process to spawn; nil when the package only
	// contributes static parts (a static prompt, MCP servers, skills).
	CapabilityServer *ServerCommand `json:"capabilityServer,omitempty"`
	// ConfigSchema is the JSON Schema of the capability config. A
	// {"$ref": "./file.json"} is replaced on load by that file's content.
	ConfigSchema json.RawMessage `json:"config_schema,omitempty"`
	// ConfigSchemaFile is the package-relative file ConfigSchema was read
	// from, or "" when it was inline.
	ConfigSchemaFile string      `json:"-"`
	Tools            []Tool      `json:"tools,omitempty"`
	Hooks            []Hook      `json:"hooks,omitempty"`
	MCPServers       []MCPServer `json:"mcpServers,omitempty"`
	Prompt           *Prompt     `json:"prompt,omitempty"`
	Commands         []Command   `json:"commands,omitempty"`
	// Provider offers the agent a model provider: an OpenAI-compatible
	// endpoint the capability server hosts on loopback and announces in
	// its handshake. Nil when the package offers none.
	Provider *Provider `json:"provider,omitempty"`
	// Skills says the package ships skills/ with SKILL.md files.
	Skills bool `json:"skills,omitempty"`
	// Status, UIAsk and Trace are the reverse-channel opt-ins (D4).
	Status bool `json:"status,omitempty"`
	UIAsk  bool `json:"ui_ask,omitempty"`
	Trace  bool `json:"trace,omitempty"`
	// Artifacts maps a target triple to a prebuilt server binary.
	Artifacts map[string]Artifact `json:"artifacts,omitempty"`
	// Sandbox is what a native server may do (see [Sandbox]); nil means
	// [DefaultSandbox].
	Sandbox *Sandbox `json:"sandbox,omitempty"`
}

// A ServerCommand is how to start the capability server. Over the stdio
// and go-plugin transports it is a process: a bare command name (resolved
// from the package's bin/, then PATH) or a path relative to the package.
// Over the wasm transport it is a WebAssembly module inside the package,
// run sandboxed: no filesystem but FS, no network, no host environment.
type ServerCommand struct {
	// Transport is "stdio" (the default when empty), "wasm" or
	// "go-plugin". It is part of the approval: changing it widens.
	Transport string            `json:"transport,omitempty"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	// Module is the package-relative path of the WebAssembly module
	// (transport "wasm" only).
	Module string `json:"module,omitempty"`
	// FS lists the directories a WASM guest may see (transport "wasm"
	// only); none by default.
	FS []Mount `json:"fs,omitempty"`
	// MaxMemoryMB caps a WASM guest's memory (transport "wasm" only); 0
	// means DefaultWASMMemoryMB.
	MaxMemoryMB int `json:"max_memory_mb,omitempty"`
}

// TransportName is the transport the server runs over: Transport, or
// "stdio" when it is empty.
func (s *ServerCommand) TransportName() string {
	if s == nil || s.Transport == "" {
		return "stdio"
	}
	return s.Transport
}

// A Mount is one directory a WASM guest may see: "${workspace}" (the
// session's workspace root, optionally followed by /sub/dir) or
// "${package}" (the package directory, likewise), read-only unless Mode is
// "rw".
type Mount struct {
	Path string `json:"path"`
	// Mode is "ro" (the default when empty) or "rw".
	Mode string `json:"mode,omitempty"`
}

// ReadOnly reports whether the mount refuses writes.
func (m Mount) ReadOnly() bool { return m.Mode != "rw" }

// WASM sandbox limits.
const (
	// DefaultWASMMemoryMB is a WASM guest's memory cap when the manifest
	// sets none.
	DefaultWASMMemoryMB = 256
	// MaxWASMMemoryMB is the largest cap a manifest may ask for: all of a
	// wasm32 guest's address space.
	MaxWASMMemoryMB = 4096
)

// Mount path variables.
const (
	WorkspaceVar = "${workspace}"
	PackageVar   = "${package}"
)

// A Tool is one declared tool and its policy (spec D6).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	NeverDefer  bool            `json:"never_defer,omitempty"`
	Streaming   bool            `json:"streaming,omitempty"`
	// Approval says when the user is asked before a call: "auto" (the
	// default, same as absent: the user's policy decides) or "always"
	// (before every call); "always_ask" is an older spelling of "always".
	// Any other value is refused. The user's policy can make it stricter,
	// never looser (see host.SessionOptions.Policy).
	Approval string `json:"approval,omitempty"`
	// Risk is "low", "medium" or "high", shown when the user is asked.
	Risk string `json:"risk,omitempty"`
	// Narration is the template of the line shown for each call: {name}
	// is replaced by the value of the argument name (see host.Narrate);
	// with a placeholder no argument fills, the tool name is shown.
	Narration string `json:"narration,omitempty"`
	// Example is sample arguments doctor uses for a round trip.
	Example json.RawMessage `json:"example,omitempty"`
	// TimeoutMS is the longest one call of the tool may run, in
	// milliseconds (1..MaxToolTimeoutMS); 0 (absent) means the host
	// default, DefaultToolTimeoutMS. It is an upper bound: the user's
	// session limit can only lower it.
	TimeoutMS int `json:"timeout_ms,omitempty"`
}

// Hook events.
//
// Deprecated: use [yep.HookPreToolUse] and [yep.HookPostToolUse], which
// these are.
const (
	EventPreToolUse  = yep.HookPreToolUse
	EventPostToolUse = yep.HookPostToolUse
)

// A Hook is one hook subscription.
type Hook struct {
	// Event is one of yep.HookEvents: a tool event (pre_tool_use,
	// post_tool_use, post_tool_use_failure) or a lifecycle event
	// (session_start, user_prompt_submit, stop, …).
	Event string `json:"event"`
	// Matcher is a glob (path.Match syntax) over the tool name for a tool
	// event, over the payload's source for a lifecycle event; "*" matches
	// all.
	Matcher string `json:"matcher"`
	// TimeoutMS bounds one firing; 0 means the host default.
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// OnError is one of yep.HookOnErrors: warn (the default when empty)
	// or block.
	OnError string `json:"on_error,omitempty"`
}

// An MCPServer is an MCP server the package contributes.
type MCPServer struct {
	Name string `json:"name"`
	// Type is one of yep.MCPTransports: stdio (Command, Args, Env) or
	// http (URL).
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	// Headers are sent with every request to an http server. In Env and
	// Headers, ${VAR} names a variable of the extension's own resolved
	// environment (its env and secret config fields).
	Headers map[string]string `json:"headers,omitempty"`
}

// A Prompt is the package's system-prompt contribution. In JSON it is either
// a string (static text) or {"text"|"file": ..., "dynamic": bool,
// "max_bytes": n}; a file is read into Text on load.
type Prompt struct {
	Text string
	// File is the package-relative file Text was read from, if any.
	File    string
	Dynamic bool
	// MaxBytes caps a dynamic contribution; 0 means the host default.
	MaxBytes int
}

type promptJSON struct {
	Text     string `json:"text,omitempty"`
	File     string `json:"file,omitempty"`
	Dynamic  bool   `json:"dynamic,omitempty"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

// UnmarshalJSON accepts a string or an object.
func (p *Prompt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*p = Prompt{}
		return json.Unmarshal(b, &p.Text)
	}
	var pj promptJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return err
	}
	*p = Prompt{Text: pj.Text, File: pj.File, Dynamic: pj.Dynamic, MaxBytes: pj.MaxBytes}
	return nil
}

// MarshalJSON writes the object form (Text inline, File omitted once read).
func (p Prompt) MarshalJSON() ([]byte, error) {
	return json.Marshal(promptJSON{Text: p.Text, Dynamic: p.Dynamic, MaxBytes: p.MaxBytes})
}

// A Command is a slash command, registered as <ext>:<name>.
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Example is sample arguments doctor runs the command with, as typed
	// after /<ext>:<name>; empty runs it with none.
	Example string `json:"example,omitempty"`
}

// A Provider is the providers facet: the models the extension may offer
// the agent, the upper bound the user approves. The handshake announces
// the endpoint's base URL and may only narrow the models.
type Provider struct {
	// Name names the provider: a letter or '_', then letters, digits and
	// '_'.
	Name   string          `json:"name"`
	Models []ProviderModel `json:"models"`
}

// A ProviderModel is one model a provider may offer.
type ProviderModel struct {
	// ID is the model id sent to the endpoint, e.g. "llama3.1:8b" or
	// "qwen/qwen3": letters, digits and . _ : / -, no whitespace.
	ID string `json:"id"`
	// ContextWindow is the model's context window in tokens, 1 to
	// MaxContextWindow; the agent trusts it, so it is part of the approval.
	ContextWindow int `json:"context_window"`
}

// An Artifact is a prebuilt server binary for one target triple.
type Artifact struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
}

// LoadOptions tune [LoadOptions.Load]. The zero value is what [Load] uses.
type LoadOptions struct {
	// MaxManifestBytes caps the manifest and each file it references; 0
	// means DefaultMaxManifestBytes.
	MaxManifestBytes int64
}

// Load reads the manifest of the package in dir — plugin.json, else
// [package.metadata.yolop] of Cargo.toml (name and version from
// [package]) — validates it against the published JSON Schema and the
// semantic rules, and resolves its $ref config schema and prompt file. It
// never executes anything.
func Load(dir string) (*Manifest, error) { return LoadOptions{}.Load(dir) }

// Load is [Load] with options.
func (o LoadOptions) Load(dir string) (*Manifest, error) {
	root, err := resolveRoot(dir)
	if err != nil {
		return nil, err
	}
	max := o.maxBytes()
	pj := filepath.Join(root, "plugin.json")
	data, err := readCapped(root, pj, max)
	if errors.Is(err, fs.ErrNotExist) {
		if cp := filepath.Join(root, filepath.FromSlash(ClaudeManifestFile)); exists(cp) {
			pj = cp
			data, err = readCapped(root, pj, max)
		}
	}
	switch {
	case err == nil:
		data, unversioned := claudeDefaults(data)
		m, err := parseManifest(data, root, pj, "", o)
		if err != nil {
			return nil, err
		}
		if err := attachDeclarative(m, data, o); err != nil {
			return nil, err
		}
		if unversioned {
			m.Warnings = append(m.Warnings, "plugin.json names no version; recorded as "+NoVersion)
		}
		if err := mergeCargoArtifacts(m, root, max); err != nil {
			return nil, err
		}
		return m, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fileError(pj, err)
	}
	ct := filepath.Join(root, "Cargo.toml")
	data, err = readCapped(root, ct, max)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s: add a plugin.json (or [package.metadata.yolop] to Cargo.toml); see the manifest format in the packaging README", ErrNoManifest, root)
	}
	if err != nil {
		return nil, fileError(ct, err)
	}
	doc, err := cargoToPlugin(data)
	if err != nil {
		if errors.Is(err, ErrNoManifest) {
			return nil, fmt.Errorf("%s: %w", ct, err)
		}
		return nil, fileError(ct, err)
	}
	return parseManifest(doc, root, ct, "package.metadata.", o)
}

// SkillsUnpinned reports an approved manifest whose facet declares skills
// but whose lock entry pins none: it was approved before skills were part
// of the approval, and its skills are approved at the next update.
func (m *Manifest) SkillsUnpinned() bool {
	return m != nil && m.Yolop != nil && m.Yolop.Skills && m.SkillPins == nil
}

// ServerBinary returns the file name of the executable the capability
// server runs, when the manifest names it in a way an installer can
// provide: a bare command name ("yolop-extension-echo", looked up in the
// package's bin/ and then PATH) or "bin/<name>". That is the name a
// prebuilt artifact or a built binary is installed under, as
// <package>/bin/<name>. ok is false when the package has no capability
// server, or starts it by another path inside the package (a script the
// package ships, say), so there is nothing to provision.
func (m *Manifest) ServerBinary() (name string, ok bool) {
	if m == nil || m.Yolop == nil || m.Yolop.CapabilityServer == nil {
		return "", false
	}
	cmd := m.Yolop.CapabilityServer.Command
	if rest, found := strings.CutPrefix(cmd, "bin/"); found {
		cmd = rest
	}
	if cmd == "" || strings.ContainsAny(cmd, `/\`) {
		return "", false
	}
	return cmd, true
}

// fileError wraps a failure to read the manifest file itself.
func fileError(file string, err error) error {
	return &ManifestError{File: file, Problems: []string{err.Error()}, kinds: []error{err}}
}

func (o LoadOptions) maxBytes() int64 {
	if o.MaxManifestBytes > 0 {
		return o.MaxManifestBytes
	}
	return DefaultMaxManifestBytes
}

// resolveRoot makes dir absolute with symlinks resolved and checks it is a
// directory.
func resolveRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("package directory %q: %w", dir, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: package directory %s does not exist", ErrNoManifest, abs)
		}
		return "", fmt.Errorf("package directory %s: %w", abs, err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("package directory %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is not a directory", ErrNoManifest, abs)
	}
	return root, nil
}

// readCapped reads a regular file inside root, refusing it (without reading
// it) when it is larger than max, and refusing symlinks that resolve outside
// root.
func readCapped(root, path string, max int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, err
		}
		if !inside(root, real) {
			return nil, fmt.Errorf("%w: %s is a symlink to %s", ErrEscapesPackage, path, real)
		}
		if fi, err = os.Stat(real); err != nil {
			return nil, err
		}
	}
	// Check before opening: opening a FIFO would block.
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrManifestTooLarge, path, st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s grew past the limit of %d bytes while being read", ErrManifestTooLarge, path, max)
	}
	return data, nil
}

// inside reports whether p is root or below it. Both must be clean absolute
// paths.
func inside(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// mergeCargoArtifacts adds the prebuilt server binaries a crate pins in
// [package.metadata.yolop.artifacts.<target>] of its Cargo.toml (where
// `yolop ext pack` writes them, with URLs relative to the crate's download
// URL) to a plugin.json manifest, so the consent summary lists them and an
// update that changes a binary is a widening the user approves again. The
// Cargo.toml entry wins for a target both name, as the installer's does.
func mergeCargoArtifacts(m *Manifest, root string, max int64) error {
	if m.Yolop == nil {
		return nil
	}
	ct := filepath.Join(root, "Cargo.toml")
	data, err := readCapped(root, ct, max)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fileError(ct, err)
	}
	var doc struct {
		Package struct {
			Metadata struct {
				Yolop struct {
					Artifacts map[string]struct {
						URL    string `toml:"url"`
						SHA256 string `toml:"sha256"`
					} `toml:"artifacts"`
				} `toml:"yolop"`
			} `toml:"metadata"`
		} `toml:"package"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return fileError(ct, err)
	}
	arts := doc.Package.Metadata.Yolop.Artifacts
	var problems []string
	for _, target := range slices.Sorted(maps.Keys(arts)) {
		a := arts[target]
		field := "package.metadata.yolop.artifacts." + target
		switch {
		case !artifactURLOK(a.URL):
			problems = append(problems, fmt.Sprintf("%s.url: %q must be an https URL or a path relative to the crate's download URL", field, a.URL))
		case !sha256Hex.MatchString(a.SHA256):
			problems = append(problems, fmt.Sprintf("%s.sha256: want 64 lowercase hex digits", field))
		default:
			if m.Yolop.Artifacts == nil {
				m.Yolop.Artifacts = map[string]Artifact{}
			}
			m.Yolop.Artifacts[target] = Artifact{URL: a.URL, SHA256: a.SHA256}
		}
	}
	if len(problems) > 0 {
		return &ManifestError{File: ct, Problems: problems, kinds: []error{ErrInvalidManifest}}
	}
	return nil
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// artifactURLOK accepts https URLs and scheme-less relative references.
func artifactURLOK(u string) bool {
	if u == "" || strings.ContainsAny(u, "\\\x00") {
		return false
	}
	if strings.HasPrefix(u, "https://") {
		return true
	}
	scheme, _, hasColon := strings.Cut(u, ":")
	return !hasColon || strings.Contains(scheme, "/")
}
