package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"yolop.dev/core/yep"
)

// Summary renders the contribution summary shown before install: everything
// the package may contribute, read from the manifest alone. Hooks that match
// every tool, never_defer tools, tool timeouts, prompt size and secret
// config fields are called out; config values never appear (a manifest
// holds none).
func Summary(m *Manifest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Extension %s %s\n", m.Name, m.Version)
	if m.Description != "" {
		fmt.Fprintf(&b, "  %s\n", m.Description)
	}
	f := m.Yolop
	if f == nil && m.Declarative != nil {
		m.Declarative.summary(&b, m.Name, m.Skills)
		return b.String()
	}
	if f == nil {
		b.WriteString("  No yolop facet: contributes no capability server, tools, hooks or prompt.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "  Protocol: %s\n", f.ProtocolVersion)
	if e := engineLine(m); e != "" {
		fmt.Fprintf(&b, "  Requires: %s\n", e)
	}
	if s := f.CapabilityServer; s != nil {
		switch s.TransportName() {
		case "wasm":
			fmt.Fprintf(&b, "  Server: WASM module %s (sandboxed: no network, no filesystem unless granted)\n", commandLine(s.Module, s.Args))
			for _, m := range s.FS {
				fmt.Fprintf(&b, "    filesystem: %s (%s)\n", m.Path, mountMode(m))
			}
			fmt.Fprintf(&b, "    memory cap: %d MiB\n", wasmMemory(s))
		case "go-plugin":
			fmt.Fprintf(&b, "  Server command: %s (over go-plugin)\n", commandLine(s.Command, s.Args))
		default:
			fmt.Fprintf(&b, "  Server command: %s\n", commandLine(s.Command, s.Args))
		}
		if len(s.Env) > 0 {
			fmt.Fprintf(&b, "    env: %s\n", strings.Join(slices.Sorted(maps.Keys(s.Env)), ", "))
		}
		b.WriteString(SandboxSummary(m))
	} else {
		b.WriteString("  Server command: none\n")
	}
	if len(f.Tools) == 0 {
		b.WriteString("  Tools: none\n")
	} else {
		fmt.Fprintf(&b, "  Tools (%d):\n", len(f.Tools))
	}
	for _, t := range f.Tools {
		var marks []string
		if t.NeverDefer {
			marks = append(marks, "never_defer: always in context")
		}
		if t.Streaming {
			marks = append(marks, "streaming")
		}
		if t.Risk != "" {
			marks = append(marks, "risk "+t.Risk)
		}
		if t.Approval != "" {
			marks = append(marks, "approval "+t.Approval)
		}
		if t.TimeoutMS > 0 {
			marks = append(marks, "timeout "+msDuration(t.TimeoutMS).String())
		}
		line := "    - " + t.Name
		if len(marks) > 0 {
			line += " [" + strings.Join(marks, ", ") + "]"
		}
		if t.Description != "" {
			line += ": " + firstLine(t.Description)
		}
		b.WriteString(line + "\n")
	}
	if len(f.Hooks) == 0 {
		b.WriteString("  Hooks: none\n")
	} else {
		fmt.Fprintf(&b, "  Hooks (%d, at most %d per extension):\n", len(f.Hooks), MaxHookSubscriptions)
	}
	for _, h := range f.Hooks {
		line := fmt.Sprintf("    - %s on %q (on_error %s", h.Event, h.Matcher, onErr(h.OnError))
		if h.TimeoutMS > 0 {
			line += fmt.Sprintf(", timeout %d ms", h.TimeoutMS)
		}
		line += ")"
		if h.Matcher == "*" {
			line += "  !! MATCHES EVERY TOOL CALL: sees (and may change) every tool's arguments"
			if h.Event == yep.HookPostToolUse {
				line = strings.Replace(line, "arguments", "results", 1)
			}
		}
		b.WriteString(line + "\n")
	}
	if len(f.MCPServers) == 0 {
		b.WriteString("  MCP servers: none\n")
	} else {
		fmt.Fprintf(&b, "  MCP servers (%d):\n", len(f.MCPServers))
	}
	for _, s := range f.MCPServers {
		if s.Type == yep.MCPHTTP {
			fmt.Fprintf(&b, "    - %s (%s): %s\n", s.Name, yep.MCPHTTP, s.URL)
		} else {
			fmt.Fprintf(&b, "    - %s (%s): %s\n", s.Name, yep.MCPStdio, commandLine(s.Command, s.Args))
		}
		if len(s.Env) > 0 {
			fmt.Fprintf(&b, "      env: %s\n", strings.Join(slices.Sorted(maps.Keys(s.Env)), ", "))
		}
	}
	switch p := f.Prompt; {
	case p == nil:
		b.WriteString("  Prompt: none\n")
	case p.Dynamic:
		fmt.Fprintf(&b, "  Prompt: %d bytes static + DYNAMIC text from the server each turn (max %s)\n", len(p.Text), maxBytes(p.MaxBytes))
	default:
		fmt.Fprintf(&b, "  Prompt: %d bytes of static system-prompt text\n", len(p.Text))
	}
	if len(f.Commands) > 0 {
		names := make([]string, len(f.Commands))
		for i, c := range f.Commands {
			names[i] = m.Name + ":" + c.Name
		}
		fmt.Fprintf(&b, "  Commands: %s\n", strings.Join(names, ", "))
	} else {
		b.WriteString("  Commands: none\n")
	}
	if f.Provider != nil {
		fmt.Fprintf(&b, "  %s (an OpenAI-compatible endpoint the server hosts on loopback)\n", providerSummary(f.Provider))
	}
	switch {
	case f.Skills && len(m.Skills) > 0:
		fmt.Fprintf(&b, "  Skills (%d, read-only text the agent may read):\n", len(m.Skills))
		for _, s := range m.Skills {
			fmt.Fprintf(&b, "    - %s: %s\n", s.Name, oneLine(s.Description, 100))
		}
	default:
		fmt.Fprintf(&b, "  Skills: %s\n", yesNo(f.Skills))
	}
	var opt []string
	for _, o := range []struct {
		on   bool
		what string
	}{{f.Status, "status (writes the status bar)"}, {f.UIAsk, "ui_ask (may ask you questions)"}, {f.Trace, "trace (receives every session event)"}} {
		if o.on {
			opt = append(opt, o.what)
		}
	}
	if len(opt) == 0 {
		opt = []string{"none"}
	}
	fmt.Fprintf(&b, "  Opt-ins: %s\n", strings.Join(opt, ", "))
	fields, err := m.ConfigFields()
	switch {
	case err != nil:
		fmt.Fprintf(&b, "  Config: unreadable schema (%v)\n", err)
	case len(fields) == 0:
		b.WriteString("  Config: none\n")
	default:
		b.WriteString("  Config:\n")
		for _, c := range fields {
			var marks []string
			if c.Secret {
				marks = append(marks, "SECRET: kept in the credential store, passed only as env")
			}
			if c.Env != "" {
				marks = append(marks, "env "+c.Env)
			}
			if c.Required {
				marks = append(marks, "required")
			}
			line := "    - " + c.Name
			if c.Type != "" {
				line += " (" + c.Type + ")"
			}
			if len(marks) > 0 {
				line += " [" + strings.Join(marks, ", ") + "]"
			}
			b.WriteString(line + "\n")
		}
	}
	if len(f.Artifacts) > 0 {
		fmt.Fprintf(&b, "  Prebuilt binaries: %s\n", strings.Join(slices.Sorted(maps.Keys(f.Artifacts)), ", "))
	}
	for _, w := range m.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	return b.String()
}

func commandLine(cmd string, args []string) string {
	parts := []string{fmt.Sprintf("%q", cmd)}
	for _, a := range args {
		parts = append(parts, fmt.Sprintf("%q", a))
	}
	return strings.Join(parts, " ")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func maxBytes(n int) string {
	if n == 0 {
		return "host default"
	}
	return fmt.Sprintf("%d bytes", n)
}

// A Change is the contribution diff between an approved manifest and a new
// one. Widening items grant the extension something it did not have and
// need consent again; narrowing items are applied with a note.
type Change struct {
	Widening  []string
	Narrowing []string
	// Notes are neutral differences (version, description).
	Notes []string
	// Signer describes who signed the new package ("commit signed by ssh
	// key SHA256:…"); empty when it is unsigned or its source has no
	// signatures (see signer.go). A change of signer is a Widening line.
	Signer string
}

// Widens reports whether the new manifest needs consent again.
func (c Change) Widens() bool { return len(c.Widening) > 0 }

// Empty reports whether nothing in the contribution changed.
func (c Change) Empty() bool { return len(c.Widening)+len(c.Narrowing)+len(c.Notes) == 0 }

// String renders the diff: "+ " lines widen, "- " lines narrow, "  " notes.
func (c Change) String() string {
	if c.Empty() {
		if c.Signer != "" {
			return "no contribution changes\n  " + c.Signer + "\n"
		}
		return "no contribution changes\n"
	}
	var b strings.Builder
	if len(c.Widening) > 0 {
		b.WriteString("Widens the grant (needs your approval):\n")
		for _, w := range c.Widening {
			b.WriteString("  + " + w + "\n")
		}
	}
	if len(c.Narrowing) > 0 {
		b.WriteString("Narrows the grant:\n")
		for _, n := range c.Narrowing {
			b.WriteString("  - " + n + "\n")
		}
	}
	for _, n := range c.Notes {
		b.WriteString("  " + n + "\n")
	}
	if c.Signer != "" {
		b.WriteString("  " + c.Signer + "\n")
	}
	return b.String()
}

// Diff compares the approved manifest old (nil for a fresh install, where
// every contribution widens) with next, section by section: identity,
// engines, protocol, server command, tools, hooks, MCP servers, prompt,
// commands, model provider, opt-ins, skills (by content digest), config
// fields and prebuilt binaries.
func Diff(old, next *Manifest) Change {
	d := &differ{}
	if old == nil {
		old = &Manifest{}
		d.wide("new extension %s", next.Name)
	} else {
		d.identity(old, next)
		d.engines(old.Engines, next.Engines)
	}
	of, nf := old.Yolop, next.Yolop
	if of == nil {
		of = &Facet{}
	}
	if nf == nil {
		nf = &Facet{}
	}
	d.protocol(of.ProtocolVersion, nf.ProtocolVersion)
	d.server(of.CapabilityServer, nf.CapabilityServer)
	d.nativeSandbox(old, next)
	d.tools(of.Tools, nf.Tools)
	d.hooks(of.Hooks, nf.Hooks)
	d.mcpServers(of.MCPServers, nf.MCPServers)
	d.prompt(of.Prompt, nf.Prompt)
	d.commands(next.Name, of.Commands, nf.Commands)
	d.provider(of.Provider, nf.Provider)
	d.optIns(of, nf)
	d.skills(of, nf, old, next)
	ofs, _ := old.ConfigFields()
	nfs, _ := next.ConfigFields()
	d.config(ofs, nfs, of.ConfigSchema, nf.ConfigSchema)
	d.artifacts(of.Artifacts, nf.Artifacts)
	if old.Declarative != nil || next.Declarative != nil {
		d.declarative(next.Name, old.Declarative, next.Declarative)
		d.declarativeSkills(old, next)
	}
	return d.c
}

// A differ builds a [Change], one section at a time.
type differ struct{ c Change }

// wide, narrow and note add a line to the Change's Widening, Narrowing or
// Notes.
func (d *differ) wide(f string, a ...any) {
	d.c.Widening = append(d.c.Widening, fmt.Sprintf(f, a...))
}

func (d *differ) narrow(f string, a ...any) {
	d.c.Narrowing = append(d.c.Narrowing, fmt.Sprintf(f, a...))
}

func (d *differ) note(f string, a ...any) {
	d.c.Notes = append(d.c.Notes, fmt.Sprintf(f, a...))
}

// identity notes a changed name, version or description.
func (d *differ) identity(old, next *Manifest) {
	if old.Name != next.Name {
		d.note("name %s → %s", old.Name, next.Name)
	}
	if old.Version != next.Version {
		d.note("version %s → %s", old.Version, next.Version)
	}
	if old.Description != next.Description {
		d.note("description changed")
	}
}

// engines compares the engines requirements. A changed (or dropped)
// engines.yolop widens: the package now needs, or may need, another host
// than the one approved, and must not run under the old approval. Other
// keys name other hosts and are noted.
func (d *differ) engines(old, next map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(next)) {
		o, had := old[k]
		switch {
		case had && o == next[k]:
		case k != EngineYolop:
			d.note("engines.%s %q → %q", k, o, next[k])
		case !had:
			d.wide("new requirement engines.yolop %q", next[k])
		default:
			d.wide("engines.yolop %q → %q", o, next[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, has := next[k]; has {
			continue
		}
		if k == EngineYolop {
			d.wide("engines.yolop %q removed", old[k])
		} else {
			d.note("engines.%s %q removed", k, old[k])
		}
	}
}

// protocol notes a changed protocol_version.
func (d *differ) protocol(old, next string) {
	if old != next && old != "" {
		d.note("protocol_version %s → %s", old, next)
	}
}

// server compares the capability server command and its environment.
func (d *differ) server(old, next *ServerCommand) {
	switch {
	case old == nil && next != nil:
		d.wide("server command %s", commandLine(serverEntry(next), next.Args))
		if t := next.TransportName(); t != "stdio" {
			d.wide("server transport %s", t)
		}
		d.sandbox(&ServerCommand{}, next)
		if len(next.Env) > 0 {
			d.wide("server env %s", strings.Join(slices.Sorted(maps.Keys(next.Env)), ", "))
		}
	case old != nil && next == nil:
		d.narrow("no capability server any more")
	case old != nil && next != nil:
		if ot, nt := old.TransportName(), next.TransportName(); ot != nt {
			d.wide("server transport changed: %s → %s", ot, nt)
		}
		if old.Command != next.Command || old.Module != next.Module || !slices.Equal(old.Args, next.Args) {
			d.wide("server command changed: %s → %s", commandLine(serverEntry(old), old.Args), commandLine(serverEntry(next), next.Args))
		}
		if next.TransportName() == "wasm" {
			d.sandbox(old, next)
		}
		d.env(old.Env, next.Env, "server")
	}
}

// serverEntry is what a server runs: its command, or its wasm module.
func serverEntry(s *ServerCommand) string {
	if s.Module != "" {
		return s.Module
	}
	return s.Command
}

// sandbox compares what a WASM guest may reach: a new mount, or one that
// became writable, widens; so does a higher memory cap.
func (d *differ) sandbox(old, next *ServerCommand) {
	om := map[string]Mount{}
	for _, m := range old.FS {
		om[m.Path] = m
	}
	seen := map[string]bool{}
	for _, m := range next.FS {
		seen[m.Path] = true
		o, had := om[m.Path]
		switch {
		case !had:
			d.wide("filesystem %s (%s) for the WASM guest", m.Path, mountMode(m))
		case o.ReadOnly() && !m.ReadOnly():
			d.wide("filesystem %s: now writable", m.Path)
		case !o.ReadOnly() && m.ReadOnly():
			d.narrow("filesystem %s: now read-only", m.Path)
		}
	}
	for _, m := range old.FS {
		if !seen[m.Path] {
			d.narrow("filesystem %s removed", m.Path)
		}
	}
	if next.TransportName() != "wasm" {
		return
	}
	switch o, n := wasmMemory(old), wasmMemory(next); {
	case old.TransportName() != "wasm":
		d.wide("WASM memory cap %d MiB", n)
	case n > o:
		d.wide("WASM memory cap %d → %d MiB", o, n)
	case n < o:
		d.narrow("WASM memory cap %d → %d MiB", o, n)
	}
}

func mountMode(m Mount) string {
	if m.ReadOnly() {
		return "read-only"
	}
	return "read-write"
}

func wasmMemory(s *ServerCommand) int {
	if s.MaxMemoryMB > 0 {
		return s.MaxMemoryMB
	}
	return DefaultWASMMemoryMB
}

// tools compares the tools by name: new and removed ones, and the
// definition and policy of the others.
func (d *differ) tools(old, next []Tool) {
	ot := map[string]Tool{}
	for _, t := range old {
		ot[t.Name] = t
	}
	nt := map[string]bool{}
	for _, t := range next {
		nt[t.Name] = true
		if o, had := ot[t.Name]; had {
			d.tool(o, t)
			continue
		}
		var marks []string
		if t.NeverDefer {
			marks = append(marks, "never_defer")
		}
		if t.TimeoutMS > 0 {
			marks = append(marks, "timeout "+msDuration(t.TimeoutMS).String())
		}
		w := "new tool " + t.Name
		if len(marks) > 0 {
			w += " (" + strings.Join(marks, ", ") + ")"
		}
		d.wide("%s", w)
	}
	for _, t := range old {
		if !nt[t.Name] {
			d.narrow("tool %s removed", t.Name)
		}
	}
}

// tool compares two versions of one tool.
func (d *differ) tool(o, t Tool) {
	if o.Description != t.Description {
		d.wide("tool %s: description changed", t.Name)
	}
	if !jsonEqual(o.InputSchema, t.InputSchema) {
		d.wide("tool %s: input schema changed", t.Name)
	}
	if !o.NeverDefer && t.NeverDefer {
		d.wide("tool %s: now never_defer", t.Name)
	} else if o.NeverDefer && !t.NeverDefer {
		d.narrow("tool %s: no longer never_defer", t.Name)
	}
	if !o.Streaming && t.Streaming {
		d.wide("tool %s: now streaming", t.Name)
	} else if o.Streaming && !t.Streaming {
		d.narrow("tool %s: no longer streaming", t.Name)
	}
	if o.Approval != t.Approval {
		d.wide("tool %s: approval hint %q → %q", t.Name, o.Approval, t.Approval)
	}
	if o.Risk != t.Risk {
		d.wide("tool %s: risk hint %q → %q", t.Name, o.Risk, t.Risk)
	}
	if o.Narration != t.Narration {
		d.wide("tool %s: narration changed", t.Name)
	}
	// A longer bound lets a call hold the turn (and the server keep
	// working) longer than approved: a widening, like a longer hook
	// timeout. The user's session limit still caps it.
	switch ob, nb := toolBound(o.TimeoutMS), toolBound(t.TimeoutMS); {
	case nb > ob:
		d.wide("tool %s: timeout raised %s → %s", t.Name, timeoutText(o.TimeoutMS), timeoutText(t.TimeoutMS))
	case nb < ob:
		d.narrow("tool %s: timeout lowered %s → %s", t.Name, timeoutText(o.TimeoutMS), timeoutText(t.TimeoutMS))
	case o.TimeoutMS != t.TimeoutMS:
		d.note("tool %s: timeout %s → %s", t.Name, timeoutText(o.TimeoutMS), timeoutText(t.TimeoutMS))
	}
}

// hooks compares the hook subscriptions, keyed by event and matcher.
func (d *differ) hooks(old, next []Hook) {
	hk := func(h Hook) string { return fmt.Sprintf("%s %q", h.Event, h.Matcher) }
	oh := map[string]Hook{}
	for _, h := range old {
		oh[hk(h)] = h
	}
	nh := map[string]bool{}
	for _, h := range next {
		k := hk(h)
		nh[k] = true
		o, had := oh[k]
		switch {
		case !had && h.Matcher == "*":
			d.wide("new hook %s — MATCHES EVERY TOOL CALL", k)
		case !had:
			d.wide("new hook %s", k)
		default:
			if onErr(o.OnError) != onErr(h.OnError) {
				d.wide("hook %s: on_error %s → %s", k, onErr(o.OnError), onErr(h.OnError))
			}
			if o.TimeoutMS != h.TimeoutMS {
				d.wide("hook %s: timeout_ms %d → %d", k, o.TimeoutMS, h.TimeoutMS)
			}
		}
	}
	for _, h := range old {
		if !nh[hk(h)] {
			d.narrow("hook %s removed", hk(h))
		}
	}
}

// mcpServers compares the MCP servers by name and transport shape.
func (d *differ) mcpServers(old, next []MCPServer) {
	om := map[string]MCPServer{}
	for _, s := range old {
		om[s.Name] = s
	}
	nm := map[string]bool{}
	for _, s := range next {
		nm[s.Name] = true
		o, had := om[s.Name]
		switch {
		case !had:
			d.wide("new MCP server %s (%s)", s.Name, mcpShape(s))
		case o.Type != s.Type || o.Command != s.Command || !slices.Equal(o.Args, s.Args) || o.URL != s.URL:
			d.wide("MCP server %s changed: %s → %s", s.Name, mcpShape(o), mcpShape(s))
		}
		if had {
			d.env(o.Env, s.Env, "MCP server "+s.Name)
		}
	}
	for _, s := range old {
		if !nm[s.Name] {
			d.narrow("MCP server %s removed", s.Name)
		}
	}
}

// prompt compares the prompt contribution: its presence, whether it is
// dynamic, its text and its size cap.
func (d *differ) prompt(op, np *Prompt) {
	switch {
	case op == nil && np != nil:
		if np.Dynamic {
			d.wide("new dynamic prompt (%d bytes static, max %s per turn)", len(np.Text), maxBytes(np.MaxBytes))
		} else {
			d.wide("new prompt text (%d bytes)", len(np.Text))
		}
	case op != nil && np == nil:
		d.narrow("prompt removed")
	case op != nil && np != nil:
		if !op.Dynamic && np.Dynamic {
			d.wide("prompt is now dynamic")
		} else if op.Dynamic && !np.Dynamic {
			d.narrow("prompt is no longer dynamic")
		}
		if len(np.Text) > len(op.Text) {
			d.wide("prompt text grew %d → %d bytes", len(op.Text), len(np.Text))
		} else if op.Text != np.Text {
			d.wide("prompt text changed (%d → %d bytes)", len(op.Text), len(np.Text))
		}
		// 0 is the host default, the widest cap.
		if np.MaxBytes != op.MaxBytes {
			if op.MaxBytes != 0 && (np.MaxBytes == 0 || np.MaxBytes > op.MaxBytes) {
				d.wide("prompt max_bytes %s → %s", maxBytes(op.MaxBytes), maxBytes(np.MaxBytes))
			} else {
				d.narrow("prompt max_bytes %s → %s", maxBytes(op.MaxBytes), maxBytes(np.MaxBytes))
			}
		}
	}
}

// commands compares the slash commands by name; ext is the extension name
// they are registered under.
func (d *differ) commands(ext string, old, next []Command) {
	oc := map[string]bool{}
	for _, x := range old {
		oc[x.Name] = true
	}
	nc := map[string]bool{}
	for _, x := range next {
		nc[x.Name] = true
		if !oc[x.Name] {
			d.wide("new command %s:%s", ext, x.Name)
		}
	}
	for _, x := range old {
		if !nc[x.Name] {
			d.narrow("command %s removed", x.Name)
		}
	}
}

// optIns compares skills and the reverse-direction opt-ins.
func (d *differ) optIns(of, nf *Facet) {
	for _, o := range []struct {
		name     string
		was, now bool
	}{{"skills", of.Skills, nf.Skills}, {yep.CapStatus, of.Status, nf.Status}, {yep.CapUIAsk, of.UIAsk, nf.UIAsk}, {yep.CapTrace, of.Trace, nf.Trace}} {
		if !o.was && o.now {
			d.wide("new opt-in %s", o.name)
		} else if o.was && !o.now {
			d.narrow("opt-in %s dropped", o.name)
		}
	}
}

// skills compares the skills a package ships, by name and content digest:
// a new or changed skill widens (the agent reads it as instructions, like
// prompt text), a removed one narrows. An approval that pinned no skills
// (a lock from before skill pins) widens by every skill it would pin.
func (d *differ) skills(of, nf *Facet, old, next *Manifest) {
	if !nf.Skills {
		return // dropping the opt-in is a narrowing optIns reports
	}
	if of.Skills && old.SkillPins == nil {
		if len(next.SkillPins) > 0 {
			names := make([]string, len(next.SkillPins))
			for i, p := range next.SkillPins {
				names[i] = p.Name
			}
			d.wide("skills %s (the earlier approval did not pin skills; approving pins them)", strings.Join(names, ", "))
		}
		return
	}
	was := map[string]SkillPin{}
	for _, p := range old.SkillPins {
		was[p.Name] = p
	}
	for _, p := range next.SkillPins {
		o, had := was[p.Name]
		switch {
		case !had:
			d.wide("new skill %s: %s", p.Name, oneLine(p.Description, 100))
		case o.Digest != p.Digest:
			d.wide("skill %s changed", p.Name)
		}
		delete(was, p.Name)
	}
	for _, n := range slices.Sorted(maps.Keys(was)) {
		d.narrow("skill %s removed", n)
	}
}

// config compares the config fields: new secret or env fields widen what
// reaches the server; other changes are noted, and so is a changed schema
// when neither version has fields.
func (d *differ) config(old, next []ConfigField, oldSchema, nextSchema json.RawMessage) {
	byName := map[string]ConfigField{}
	for _, x := range old {
		byName[x.Name] = x
	}
	for _, x := range next {
		o, had := byName[x.Name]
		switch {
		case !had && (x.Secret || x.Env != ""):
			d.wide("new config field %s%s", x.Name, fieldMarks(x))
		case !had:
			d.note("new config field %s", x.Name)
		case o.Secret != x.Secret || o.Env != x.Env:
			d.wide("config field %s: now%s", x.Name, fieldMarks(x))
		}
		delete(byName, x.Name)
	}
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		d.note("config field %s removed", n)
	}
	if !jsonEqual(oldSchema, nextSchema) && len(old)+len(next) == 0 {
		d.note("config schema changed")
	}
}

// artifacts compares the prebuilt binaries by target: a different binary
// is a different program.
func (d *differ) artifacts(old, next map[string]Artifact) {
	for _, t := range slices.Sorted(maps.Keys(next)) {
		if o, had := old[t]; !had {
			d.wide("new prebuilt binary for %s", t)
		} else if o != next[t] {
			d.wide("prebuilt binary for %s changed", t)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(old)) {
		if _, has := next[t]; !has {
			d.narrow("prebuilt binary for %s removed", t)
		}
	}
}

// env compares the environment variables of what, by name; values are
// never shown.
func (d *differ) env(old, next map[string]string, what string) {
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if v, had := old[k]; !had {
			d.wide("%s env %s added", what, k)
		} else if v != next[k] {
			d.wide("%s env %s changed", what, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, has := next[k]; !has {
			d.narrow("%s env %s removed", what, k)
		}
	}
}

func msDuration(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// toolBound is how long a call of a tool with timeout_ms may run when the
// session sets no lower limit.
func toolBound(ms int) time.Duration {
	if ms <= 0 {
		return msDuration(DefaultToolTimeoutMS)
	}
	return msDuration(ms)
}

func timeoutText(ms int) string {
	if ms <= 0 {
		return msDuration(DefaultToolTimeoutMS).String() + " (host default)"
	}
	return msDuration(ms).String()
}

// onErr is a hook's on_error, with its default.
func onErr(s string) string {
	if s == "" {
		return yep.HookOnErrorWarn
	}
	return s
}

func fieldMarks(f ConfigField) string {
	var m []string
	if f.Secret {
		m = append(m, "secret")
	}
	if f.Env != "" {
		m = append(m, "env "+f.Env)
	}
	if len(m) == 0 {
		return " plain"
	}
	return " (" + strings.Join(m, ", ") + ")"
}

func mcpShape(s MCPServer) string {
	if s.Type == yep.MCPHTTP {
		return yep.MCPHTTP + " " + s.URL
	}
	return yep.MCPStdio + " " + commandLine(s.Command, s.Args)
}

// jsonEqual compares two JSON values ignoring whitespace differences.
func jsonEqual(a, b []byte) bool {
	return bytes.Equal(compactJSON(a), compactJSON(b))
}

func compactJSON(a []byte) []byte {
	var buf bytes.Buffer
	if err := jsonCompact(&buf, a); err != nil {
		return bytes.TrimSpace(a)
	}
	return buf.Bytes()
}

// oneLine folds s onto one line and cuts it to at most max characters.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}
