package packaging

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"yolop.dev/core/skill"
	"yolop.dev/core/yep"
)

// FormatClaudeCode is [Declarative].Format for a Claude Code plugin.
const FormatClaudeCode = "claude-code"

// PluginRootVar is Claude Code's variable for the plugin directory, which
// hook commands and MCP servers use; yolop expands it to the package
// directory.
const PluginRootVar = "${CLAUDE_PLUGIN_ROOT}"

// ClaudeManifestFile is where a Claude Code plugin keeps its manifest when
// it has no plugin.json at its root.
const ClaudeManifestFile = ".claude-plugin/plugin.json"

// DefaultClaudeHookTimeoutMS is a Claude Code hook's timeout when its
// hooks.json sets none (Claude Code's own default is 60 seconds).
const DefaultClaudeHookTimeoutMS = 60000

// A Declarative is what a package without a yolop facet contributes
// through the declarative path: a Claude Code plugin's commands, command
// hooks, MCP servers and agents, read from its files without executing
// anything. It is part of the manifest an approval records, so an update's
// contribution diff compares it section by section, and Pins fix the
// content of every file a hook command names.
type Declarative struct {
	// Format is FormatClaudeCode.
	Format   string        `json:"format"`
	Commands []DeclCommand `json:"commands,omitempty"`
	Hooks    []DeclHook    `json:"hooks,omitempty"`
	// MCPServers are the plugin's servers (.mcp.json or mcpServers), with
	// ${CLAUDE_PLUGIN_ROOT} as written; the grant expands it.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	// Agents are agents/*.md: listed and shown, not run.
	Agents []DeclAgent `json:"agents,omitempty"`
	// Unsupported names each part of the plugin yolop does not run, so
	// the consent summary shows it instead of dropping it silently.
	Unsupported []string `json:"unsupported,omitempty"`
	// Pins maps each package-relative file a hook command names to its
	// SHA-256: checked again before every run of the command.
	Pins map[string]string `json:"pins,omitempty"`

	// read lists the package files the plugin was read from, absolute:
	// what a path source's approval pins beside plugin.json.
	read []string
}

// A DeclCommand is one commands/<name>.md: a slash command
// <plugin>:<name> that expands to Body.
type DeclCommand struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	ArgumentHint string `json:"argument_hint,omitempty"`
	// Body is the prompt the command expands to, after the frontmatter;
	// $ARGUMENTS and $1..$9 are replaced when it runs.
	Body string `json:"body"`
}

// A DeclHook is one command hook of hooks/hooks.json, mapped onto a yolop
// hook subscription.
type DeclHook struct {
	// ClaudeEvent and ClaudeMatcher are as written in hooks.json.
	ClaudeEvent   string `json:"claude_event"`
	ClaudeMatcher string `json:"claude_matcher,omitempty"`
	// Event is the yolop event, Matcher the yolop glob (a tool name
	// mapped onto yolop's built-ins, "*" for all).
	Event   string `json:"event"`
	Matcher string `json:"matcher"`
	// Command is the shell command as written.
	Command   string `json:"command"`
	TimeoutMS int    `json:"timeout_ms"`
	// OnError is block for an event that can block (fail closed), warn
	// otherwise.
	OnError string `json:"on_error"`
}

// A DeclAgent is one agents/<name>.md.
type DeclAgent struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// ClaudeToolNames maps Claude Code's tool names onto yolop's built-in
// tools, for hook matchers and for the tool_name a hook reads.
var ClaudeToolNames = map[string]string{
	"Bash":  "bash",
	"Read":  "read_file",
	"Write": "write_file",
	"Edit":  "edit_file",
	"Glob":  "list_files",
	"Grep":  "grep",
}

// claudeEvents maps Claude Code's hook events onto yolop's.
var claudeEvents = map[string]string{
	"PreToolUse":         yep.HookPreToolUse,
	"PostToolUse":        yep.HookPostToolUse,
	"PostToolUseFailure": "post_tool_use_failure",
	"SessionStart":       "session_start",
	"SessionEnd":         "session_end",
	"UserPromptSubmit":   "user_prompt_submit",
	"Stop":               "stop",
	"PreCompact":         "pre_compact",
	"Notification":       "notification",
}

// ClaudeEventName is the Claude Code name of a yolop hook event, or "".
func ClaudeEventName(event string) string {
	for k, v := range claudeEvents {
		if v == event {
			return k
		}
	}
	return ""
}

// blockingEvent reports whether a hook of event can block what it fires
// for: its failures then fail closed.
func blockingEvent(event string) bool {
	switch event {
	case yep.HookPreToolUse, yep.HookPostToolUse, "user_prompt_submit", "stop":
		return true
	}
	return false
}

func toolEvent(event string) bool {
	return event == yep.HookPreToolUse || event == yep.HookPostToolUse || event == "post_tool_use_failure"
}

// loadDeclarative reads the Claude Code parts of the package in root. It
// runs nothing. raw is the plugin.json, for its hooks and mcpServers keys.
func loadDeclarative(root string, raw []byte, max int64) (*Declarative, error) {
	d := &Declarative{Format: FormatClaudeCode}
	var pj struct {
		Hooks      json.RawMessage `json:"hooks"`
		MCPServers json.RawMessage `json:"mcpServers"`
		Commands   json.RawMessage `json:"commands"`
		Agents     json.RawMessage `json:"agents"`
	}
	if err := json.Unmarshal(raw, &pj); err != nil {
		return nil, err
	}
	if len(pj.Commands) > 0 {
		d.Unsupported = append(d.Unsupported, "plugin.json commands: custom command paths are not read (only commands/*.md)")
	}
	if len(pj.Agents) > 0 {
		d.Unsupported = append(d.Unsupported, "plugin.json agents: custom agent paths are not read (only agents/*.md)")
	}
	if err := d.readCommands(root, max); err != nil {
		return nil, err
	}
	if err := d.readAgents(root, max); err != nil {
		return nil, err
	}
	hooks, err := d.referenced(root, pj.Hooks, "hooks/hooks.json", max)
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	if hooks != nil {
		if err := d.readHooks(root, hooks); err != nil {
			return nil, err
		}
	}
	if len(d.Hooks) > 0 {
		if err := d.pinHooksDir(root); err != nil {
			return nil, err
		}
	}
	mcp, err := d.referenced(root, pj.MCPServers, ".mcp.json", max)
	if err != nil {
		return nil, fmt.Errorf("mcpServers: %w", err)
	}
	if mcp != nil {
		if err := d.readMCP(mcp); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// referenced returns a plugin.json key's content: inline JSON, the file a
// string names (package-relative), or the default file when the key is
// absent; nil when there is none.
func (d *Declarative) referenced(root string, key json.RawMessage, def string, max int64) ([]byte, error) {
	rel := def
	if len(key) > 0 && string(key) != "null" {
		var s string
		if json.Unmarshal(key, &s) != nil {
			return key, nil
		}
		rel = strings.TrimPrefix(s, "./")
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if !inside(root, filepath.Clean(p)) {
		return nil, fmt.Errorf("%w: %s", ErrEscapesPackage, rel)
	}
	data, err := readCapped(root, p, max)
	if errors.Is(err, fs.ErrNotExist) && len(key) == 0 {
		return nil, nil
	}
	if err == nil {
		d.read = append(d.read, p)
	}
	return data, err
}

// frontmatter splits a markdown file into its `key: value` frontmatter
// and body.
func frontmatter(text string) (map[string]string, string) {
	text = strings.TrimPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "\ufeff")
	meta := map[string]string{}
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return meta, text
	}
	head, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return meta, text
	}
	for _, line := range strings.Split(head, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		meta[strings.TrimSpace(k)] = v
	}
	body, _ = strings.CutPrefix(body, "\n")
	return meta, body
}

var shellExpansion = regexp.MustCompile("!`[^`]*`")

func mdFiles(root, dir string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(filepath.Join(root, dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ents, err
}

func (d *Declarative) readCommands(root string, max int64) error {
	ents, err := mdFiles(root, "commands")
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			d.Unsupported = append(d.Unsupported, fmt.Sprintf("commands/%s/: namespaced commands in subdirectories are not read", e.Name()))
			continue
		}
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok {
			continue
		}
		p := filepath.Join(root, "commands", e.Name())
		data, err := readCapped(root, p, max)
		if err != nil {
			return err
		}
		d.read = append(d.read, p)
		meta, body := frontmatter(string(data))
		d.Commands = append(d.Commands, DeclCommand{Name: name, Description: meta["description"], ArgumentHint: meta["argument-hint"], Body: body})
		if shellExpansion.MatchString(body) {
			d.Unsupported = append(d.Unsupported, fmt.Sprintf("command %s: !`…` shell expansions are not run; they reach the model as written", name))
		}
		if meta["allowed-tools"] != "" {
			d.Unsupported = append(d.Unsupported, fmt.Sprintf("command %s: allowed-tools is not applied; your [approval] policy decides", name))
		}
	}
	return nil
}

func (d *Declarative) readAgents(root string, max int64) error {
	ents, err := mdFiles(root, "agents")
	if err != nil {
		return err
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if e.IsDir() || !ok {
			continue
		}
		p := filepath.Join(root, "agents", e.Name())
		data, err := readCapped(root, p, max)
		if err != nil {
			return err
		}
		d.read = append(d.read, p)
		meta, _ := frontmatter(string(data))
		if meta["name"] != "" {
			name = meta["name"]
		}
		d.Agents = append(d.Agents, DeclAgent{Name: name, Description: firstLine(meta["description"])})
	}
	if len(d.Agents) > 0 {
		d.Unsupported = append(d.Unsupported, fmt.Sprintf("agents (%d): subagents are not supported by this yolop; they are listed, never run", len(d.Agents)))
	}
	return nil
}

type claudeHooksFile struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string  `json:"type"`
			Command string  `json:"command"`
			Timeout float64 `json:"timeout"`
			If      string  `json:"if"`
			Async   bool    `json:"async"`
			Rewake  bool    `json:"asyncRewake"`
		} `json:"hooks"`
	} `json:"hooks"`
}

func (d *Declarative) readHooks(root string, data []byte) error {
	var hf claudeHooksFile
	if err := json.Unmarshal(data, &hf); err != nil {
		return fmt.Errorf("hooks.json: %w", err)
	}
	for _, ev := range slices.Sorted(maps.Keys(hf.Hooks)) {
		yev, known := claudeEvents[ev]
		if !known || !slices.Contains(yep.HookEvents, yev) {
			d.Unsupported = append(d.Unsupported, fmt.Sprintf("hook %s: this yolop does not fire that event; its hooks never run", ev))
			continue
		}
		for _, grp := range hf.Hooks[ev] {
			matchers, dropped := mapMatcher(yev, grp.Matcher)
			for _, m := range dropped {
				d.Unsupported = append(d.Unsupported, fmt.Sprintf("hook %s matcher %q: no such tool in yolop; that part never matches", ev, m))
			}
			for _, h := range grp.Hooks {
				switch {
				case h.Type != "command":
					d.Unsupported = append(d.Unsupported, fmt.Sprintf("hook %s: %q hooks are not supported (only command hooks)", ev, h.Type))
					continue
				case h.If != "":
					d.Unsupported = append(d.Unsupported, fmt.Sprintf("hook %s: the if condition %q is not applied; the command runs for every matching call", ev, h.If))
				case h.Async || h.Rewake:
					d.Unsupported = append(d.Unsupported, fmt.Sprintf("hook %s: async hooks run synchronously", ev))
				}
				ms := DefaultClaudeHookTimeoutMS
				if h.Timeout > 0 {
					ms = min(int(h.Timeout*1000), MaxHookTimeoutMS)
				}
				onErr := yep.HookOnErrorWarn
				if blockingEvent(yev) {
					onErr = yep.HookOnErrorBlock
				}
				for _, m := range matchers {
					d.Hooks = append(d.Hooks, DeclHook{ClaudeEvent: ev, ClaudeMatcher: grp.Matcher, Event: yev, Matcher: m, Command: h.Command, TimeoutMS: ms, OnError: onErr})
				}
				if err := d.pin(root, h.Command); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// mapMatcher turns a Claude Code matcher ("Bash", "Edit|Write", "", "*",
// "mcp__srv__.*") into yolop globs, and returns the alternatives that name
// no yolop tool.
func mapMatcher(event, m string) (globs, dropped []string) {
	m = strings.TrimSpace(m)
	if m == "" || m == "*" || m == ".*" {
		return []string{"*"}, nil
	}
	for _, alt := range strings.Split(m, "|") {
		alt = strings.TrimSpace(alt)
		switch {
		case !toolEvent(event):
			globs = append(globs, alt)
		case ClaudeToolNames[alt] != "":
			globs = append(globs, ClaudeToolNames[alt])
		case strings.HasPrefix(alt, "mcp__"):
			globs = append(globs, strings.ReplaceAll(alt, ".*", "*"))
		default:
			dropped = append(dropped, alt)
		}
	}
	return globs, dropped
}

// pluginFileRef matches ${CLAUDE_PLUGIN_ROOT}/path in a command.
var pluginFileRef = regexp.MustCompile(`\$\{CLAUDE_PLUGIN_ROOT\}/([^\s"']+)`)

// pin records the digest of every package file command names.
func (d *Declarative) pin(root, command string) error {
	for _, sm := range pluginFileRef.FindAllStringSubmatch(command, -1) {
		rel := filepath.ToSlash(filepath.Clean(sm[1]))
		p := filepath.Join(root, filepath.FromSlash(rel))
		if !inside(root, p) {
			return fmt.Errorf("hook command %q: %w: %s", command, ErrEscapesPackage, rel)
		}
		sum, err := hashFile(p)
		if err != nil {
			return fmt.Errorf("hook command %q names %s: %w", command, rel, err)
		}
		if d.Pins == nil {
			d.Pins = map[string]string{}
		}
		d.Pins[rel] = sum
	}
	return nil
}

// VerifyPins checks, against their approved digests in dir, the files a
// hook command names and every file under the plugin's hooks/ (a module a
// script imports included): an edited, removed or replaced file is
// refused, and so is a file under hooks/ the approval does not know (one
// that would shadow a module).
func (d *Declarative) VerifyPins(dir, command string) error {
	check := func(rel string) error {
		want, ok := d.Pins[rel]
		if !ok {
			return fmt.Errorf("%w: %s is not pinned by the approval", ErrTampered, rel)
		}
		got, err := hashFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrTampered, rel, err)
		}
		if got != want {
			return fmt.Errorf("%w: %s changed since it was approved; re-approve it with `yolop ext update`", ErrTampered, rel)
		}
		return nil
	}
	for _, sm := range pluginFileRef.FindAllStringSubmatch(command, -1) {
		if err := check(filepath.ToSlash(filepath.Clean(sm[1]))); err != nil {
			return err
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(d.Pins)) {
		if strings.HasPrefix(rel, hooksDir+"/") {
			if err := check(rel); err != nil {
				return err
			}
		}
	}
	files, err := hookFiles(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTampered, err)
	}
	for _, rel := range files {
		if _, ok := d.Pins[rel]; !ok {
			return fmt.Errorf("%w: %s was added to hooks/ since the plugin was approved; re-approve it with `yolop ext update`", ErrTampered, rel)
		}
	}
	return nil
}

// hooksDir is the directory of a plugin whose every file is pinned when the
// plugin has hooks.
const hooksDir = "hooks"

// pinHooksDir pins every file under root's hooks/: the scripts, and the
// modules and data they read that their command lines do not name.
func (d *Declarative) pinHooksDir(root string) error {
	files, err := hookFiles(root)
	if err != nil {
		return err
	}
	for _, rel := range files {
		sum, err := hashFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if d.Pins == nil {
			d.Pins = map[string]string{}
		}
		d.Pins[rel] = sum
	}
	return nil
}

// hookFiles lists the files under root's hooks/, package-relative with
// forward slashes; none when there is no such directory. A symbolic link
// is listed as the file it leads to, and is an error when that is outside
// the package.
func hookFiles(root string) ([]string, error) {
	base := filepath.Join(root, hooksDir)
	if fi, err := os.Lstat(base); err != nil || !fi.IsDir() {
		return nil, nil
	}
	var out []string
	err := filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		if e.Type()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return err
			}
			realRoot, err := filepath.EvalSymlinks(root)
			if err != nil {
				return err
			}
			if !inside(realRoot, real) {
				return fmt.Errorf("%w: %s", ErrEscapesPackage, p)
			}
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out, err
}

func (d *Declarative) readMCP(data []byte) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf(".mcp.json: %w", err)
	}
	if inner, ok := doc["mcpServers"]; ok {
		doc = nil
		if err := json.Unmarshal(inner, &doc); err != nil {
			return fmt.Errorf("mcpServers: %w", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(doc)) {
		var s struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		}
		if err := json.Unmarshal(doc[name], &s); err != nil {
			return fmt.Errorf("mcpServers.%s: %w", name, err)
		}
		switch {
		case s.Command != "" && (s.Type == "" || s.Type == yep.MCPStdio):
			d.MCPServers = append(d.MCPServers, MCPServer{Name: name, Type: yep.MCPStdio, Command: s.Command, Args: s.Args, Env: s.Env})
		case s.URL != "" && (s.Type == "" || s.Type == yep.MCPHTTP):
			d.MCPServers = append(d.MCPServers, MCPServer{Name: name, Type: yep.MCPHTTP, URL: s.URL, Headers: s.Headers})
		default:
			d.Unsupported = append(d.Unsupported, fmt.Sprintf("MCP server %s: type %q is not supported (stdio and http are)", name, s.Type))
		}
	}
	return nil
}

// ExpandPluginRoot replaces ${CLAUDE_PLUGIN_ROOT} in s with dir.
func ExpandPluginRoot(s, dir string) string {
	return strings.ReplaceAll(s, PluginRootVar, dir)
}

// Expand is the prompt a command expands to with args: $ARGUMENTS is
// replaced by args as typed, $1..$9 by its whitespace-separated words
// (quotes group), a missing one by nothing.
func (c DeclCommand) Expand(args string) string {
	words := splitWords(args)
	out := strings.ReplaceAll(c.Body, "$ARGUMENTS", strings.TrimSpace(args))
	for i := 9; i >= 1; i-- {
		v := ""
		if i <= len(words) {
			v = words[i-1]
		}
		out = strings.ReplaceAll(out, fmt.Sprintf("$%d", i), v)
	}
	return out
}

func splitWords(s string) []string {
	var out []string
	var cur strings.Builder
	quote, in := rune(0), false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote, in = r, true
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// summary appends the declarative part of the contribution summary.
func (d *Declarative) summary(b *strings.Builder, name string, skills []skill.Meta) {
	b.WriteString("  Claude Code plugin (no yolop facet): loaded declaratively, no capability server\n")
	if len(d.Commands) == 0 {
		b.WriteString("  Commands: none\n")
	} else {
		fmt.Fprintf(b, "  Commands (%d), each expanding to a prompt:\n", len(d.Commands))
	}
	for _, c := range d.Commands {
		hint := ""
		if c.ArgumentHint != "" {
			hint = " " + c.ArgumentHint
		}
		fmt.Fprintf(b, "    /%s:%s%s — %s\n", name, c.Name, hint, oneLine(c.Description, 100))
	}
	if len(d.Hooks) == 0 {
		b.WriteString("  Command hooks: none\n")
	} else {
		fmt.Fprintf(b, "  Command hooks (%d), run on this machine with your permissions:\n", len(d.Hooks))
	}
	for _, h := range d.Hooks {
		flag := ""
		if h.Matcher == "*" && toolEvent(h.Event) {
			flag = "  !! MATCHES EVERY TOOL CALL"
		}
		fmt.Fprintf(b, "    %s %s (%s %q): %s (timeout %s, on_error %s)%s\n", h.Event, h.Matcher, h.ClaudeEvent, h.ClaudeMatcher, h.Command, msDuration(h.TimeoutMS), h.OnError, flag)
	}
	for _, rel := range slices.Sorted(maps.Keys(d.Pins)) {
		fmt.Fprintf(b, "    pinned: %s sha256:%s\n", rel, d.Pins[rel][:12])
	}
	if len(d.MCPServers) > 0 {
		fmt.Fprintf(b, "  MCP servers (%d):\n", len(d.MCPServers))
	}
	for _, s := range d.MCPServers {
		fmt.Fprintf(b, "    %s: %s\n", s.Name, mcpShape(s))
	}
	if len(skills) > 0 {
		fmt.Fprintf(b, "  Skills (%d):\n", len(skills))
	}
	for _, s := range skills {
		fmt.Fprintf(b, "    %s — %s\n", s.Name, oneLine(s.Description, 100))
	}
	for _, a := range d.Agents {
		fmt.Fprintf(b, "  Agent %s — %s (not supported: never run)\n", a.Name, oneLine(a.Description, 100))
	}
	if len(d.Unsupported) > 0 {
		fmt.Fprintf(b, "  Not supported (%d):\n", len(d.Unsupported))
	}
	for _, u := range d.Unsupported {
		fmt.Fprintf(b, "    - %s\n", u)
	}
}

// diffDeclarative compares the declarative parts of two manifests: a new
// or changed command or hook, a new pinned file or a changed digest, a new
// MCP server widens; a removed one narrows.
func (d *differ) declarative(name string, old, next *Declarative) {
	if old == nil {
		old = &Declarative{}
	}
	if next == nil {
		next = &Declarative{}
	}
	oc := map[string]DeclCommand{}
	for _, c := range old.Commands {
		oc[c.Name] = c
	}
	for _, c := range next.Commands {
		o, had := oc[c.Name]
		switch {
		case !had:
			d.wide("command /%s:%s", name, c.Name)
		case o != c:
			d.wide("command /%s:%s changed its prompt", name, c.Name)
		}
		delete(oc, c.Name)
	}
	for _, n := range slices.Sorted(maps.Keys(oc)) {
		d.narrow("command /%s:%s", name, n)
	}
	hk := func(h DeclHook) string { return fmt.Sprintf("%s %s: %s", h.Event, h.Matcher, h.Command) }
	oh := map[string]DeclHook{}
	for _, h := range old.Hooks {
		oh[hk(h)] = h
	}
	for _, h := range next.Hooks {
		o, had := oh[hk(h)]
		switch {
		case !had:
			d.wide("command hook %s", hk(h))
		case h.TimeoutMS > o.TimeoutMS || h.OnError != o.OnError:
			d.wide("command hook %s: timeout %s, on_error %s", hk(h), msDuration(h.TimeoutMS), h.OnError)
		}
		delete(oh, hk(h))
	}
	for _, k := range slices.Sorted(maps.Keys(oh)) {
		d.narrow("command hook %s", k)
	}
	for _, rel := range slices.Sorted(maps.Keys(next.Pins)) {
		switch o, had := old.Pins[rel]; {
		case !had:
			d.wide("hook file %s", rel)
		case o != next.Pins[rel]:
			d.wide("hook file %s changed (sha256:%s)", rel, next.Pins[rel][:12])
		}
	}
	d.mcpServers(old.MCPServers, next.MCPServers)
	oa := map[string]bool{}
	for _, a := range old.Agents {
		oa[a.Name] = true
	}
	for _, a := range next.Agents {
		if !oa[a.Name] {
			d.note("agent %s (not supported: never run)", a.Name)
		}
	}
}

// attachDeclarative reads the declarative parts of a manifest without a
// yolop facet into m.Declarative, and its skills into m.Skills and
// m.SkillPins, as a facet's skills are read.
func attachDeclarative(m *Manifest, raw []byte, o LoadOptions) error {
	if m.Yolop != nil {
		m.Declarative = nil
		return nil
	}
	d, err := loadDeclarative(m.Dir, raw, o.maxBytes())
	if err != nil {
		return &ManifestError{File: m.File, Problems: []string{err.Error()}, kinds: []error{ErrInvalidManifest}}
	}
	subs := map[[2]string]bool{}
	for _, h := range d.Hooks {
		subs[[2]string{h.Event, h.Matcher}] = true
	}
	if len(subs) > MaxHookSubscriptions {
		return &ManifestError{File: m.File, Problems: []string{fmt.Sprintf("hooks: %d subscriptions (event and tool) after mapping, more than the %d an extension may hold", len(subs), MaxHookSubscriptions)}, kinds: []error{ErrInvalidManifest}}
	}
	m.Declarative = d
	m.Skills, m.SkillPins = nil, []SkillPin{}
	if fi, err := os.Stat(filepath.Join(m.Dir, "skills")); err == nil && fi.IsDir() {
		c := &checker{root: m.Dir, max: o.maxBytes(), m: m}
		c.checkSkills()
		if len(c.errs) > 0 {
			return &ManifestError{File: m.File, Problems: c.errs, kinds: c.kinds}
		}
	}
	return nil
}

// declarativeSkills compares the skills of two declarative plugins, which
// always pin their skills.
func (d *differ) declarativeSkills(old, next *Manifest) {
	o := *old
	if o.SkillPins == nil {
		o.SkillPins = []SkillPin{}
	}
	d.skills(&Facet{Skills: true}, &Facet{Skills: true}, &o, next)
}

// NoVersion is the version recorded for a Claude Code plugin whose
// plugin.json names none (only its name is required there).
const NoVersion = "0.0.0"

// claudeDefaults fills what Claude Code's plugin.json may leave out and
// yolop's manifest requires — the version — in a manifest without a yolop
// facet. It reports whether it did.
func claudeDefaults(data []byte) ([]byte, bool) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil || doc == nil {
		return data, false
	}
	if _, facet := doc["yolop"]; facet {
		return data, false
	}
	if _, ok := doc["version"]; ok {
		return data, false
	}
	doc["version"] = json.RawMessage(`"` + NoVersion + `"`)
	out, err := json.Marshal(doc)
	if err != nil {
		return data, false
	}
	return out, true
}

// Files lists the package files the plugin was read from and the files its
// hook commands name, absolute: for a path source, what the approval pins
// beside plugin.json, so a changed command, hook or script is an update.
func (d *Declarative) Files(dir string) []string {
	out := slices.Clone(d.read)
	for _, rel := range slices.Sorted(maps.Keys(d.Pins)) {
		out = append(out, filepath.Join(dir, filepath.FromSlash(rel)))
	}
	return out
}
