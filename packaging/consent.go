package packaging

import (
	"bytes"
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
	if f == nil {
		b.WriteString("  No yolop facet: contributes no capability server, tools, hooks or prompt.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "  Protocol: %s\n", f.ProtocolVersion)
	if s := f.CapabilityServer; s != nil {
		fmt.Fprintf(&b, "  Server command: %s\n", commandLine(s.Command, s.Args))
		if len(s.Env) > 0 {
			fmt.Fprintf(&b, "    env: %s\n", strings.Join(slices.Sorted(maps.Keys(s.Env)), ", "))
		}
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
		fmt.Fprintf(&b, "  Hooks (%d):\n", len(f.Hooks))
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
	fmt.Fprintf(&b, "  Skills: %s\n", yesNo(f.Skills))
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
}

// Widens reports whether the new manifest needs consent again.
func (c Change) Widens() bool { return len(c.Widening) > 0 }

// Empty reports whether nothing in the contribution changed.
func (c Change) Empty() bool { return len(c.Widening)+len(c.Narrowing)+len(c.Notes) == 0 }

// String renders the diff: "+ " lines widen, "- " lines narrow, "  " notes.
func (c Change) String() string {
	if c.Empty() {
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
	return b.String()
}

// Diff compares the approved manifest old (nil for a fresh install, where
// every contribution widens) with next.
func Diff(old, next *Manifest) Change {
	var c Change
	wide := func(f string, a ...any) { c.Widening = append(c.Widening, fmt.Sprintf(f, a...)) }
	narrow := func(f string, a ...any) { c.Narrowing = append(c.Narrowing, fmt.Sprintf(f, a...)) }
	note := func(f string, a ...any) { c.Notes = append(c.Notes, fmt.Sprintf(f, a...)) }
	if old == nil {
		old = &Manifest{}
		wide("new extension %s", next.Name)
	} else {
		if old.Name != next.Name {
			note("name %s → %s", old.Name, next.Name)
		}
		if old.Version != next.Version {
			note("version %s → %s", old.Version, next.Version)
		}
		if old.Description != next.Description {
			note("description changed")
		}
	}
	of, nf := old.Yolop, next.Yolop
	if of == nil {
		of = &Facet{}
	}
	if nf == nil {
		nf = &Facet{}
	}
	if of.ProtocolVersion != nf.ProtocolVersion && of.ProtocolVersion != "" {
		note("protocol_version %s → %s", of.ProtocolVersion, nf.ProtocolVersion)
	}

	// Server command.
	os_, ns := of.CapabilityServer, nf.CapabilityServer
	switch {
	case os_ == nil && ns != nil:
		wide("server command %s", commandLine(ns.Command, ns.Args))
		if len(ns.Env) > 0 {
			wide("server env %s", strings.Join(slices.Sorted(maps.Keys(ns.Env)), ", "))
		}
	case os_ != nil && ns == nil:
		narrow("no capability server any more")
	case os_ != nil && ns != nil:
		if os_.Command != ns.Command || !slices.Equal(os_.Args, ns.Args) {
			wide("server command changed: %s → %s", commandLine(os_.Command, os_.Args), commandLine(ns.Command, ns.Args))
		}
		diffEnv(os_.Env, ns.Env, "server", wide, narrow)
	}

	// Tools.
	ot := map[string]Tool{}
	for _, t := range of.Tools {
		ot[t.Name] = t
	}
	nt := map[string]bool{}
	for _, t := range nf.Tools {
		nt[t.Name] = true
		o, had := ot[t.Name]
		if !had {
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
			wide("%s", w)
			continue
		}
		if o.Description != t.Description {
			wide("tool %s: description changed", t.Name)
		}
		if !jsonEqual(o.InputSchema, t.InputSchema) {
			wide("tool %s: input schema changed", t.Name)
		}
		if !o.NeverDefer && t.NeverDefer {
			wide("tool %s: now never_defer", t.Name)
		} else if o.NeverDefer && !t.NeverDefer {
			narrow("tool %s: no longer never_defer", t.Name)
		}
		if !o.Streaming && t.Streaming {
			wide("tool %s: now streaming", t.Name)
		} else if o.Streaming && !t.Streaming {
			narrow("tool %s: no longer streaming", t.Name)
		}
		if o.Approval != t.Approval {
			wide("tool %s: approval hint %q → %q", t.Name, o.Approval, t.Approval)
		}
		if o.Risk != t.Risk {
			wide("tool %s: risk hint %q → %q", t.Name, o.Risk, t.Risk)
		}
		if o.Narration != t.Narration {
			wide("tool %s: narration changed", t.Name)
		}
		// A longer bound lets a call hold the turn (and the server keep
		// working) longer than approved: a widening, like a longer hook
		// timeout. The user's session limit still caps it.
		switch ob, nb := toolBound(o.TimeoutMS), toolBound(t.TimeoutMS); {
		case nb > ob:
			wide("tool %s: timeout raised %s → %s", t.Name, timeoutText(o.TimeoutMS), timeoutText(t.TimeoutMS))
		case nb < ob:
			narrow("tool %s: timeout lowered %s → %s", t.Name, timeoutText(o.TimeoutMS), timeoutText(t.TimeoutMS))
		case o.TimeoutMS != t.TimeoutMS:
			note("tool %s: timeout %s → %s", t.Name, timeoutText(o.TimeoutMS), timeoutText(t.TimeoutMS))
		}
	}
	for _, t := range of.Tools {
		if !nt[t.Name] {
			narrow("tool %s removed", t.Name)
		}
	}

	// Hooks, keyed by event and matcher.
	hk := func(h Hook) string { return fmt.Sprintf("%s %q", h.Event, h.Matcher) }
	oh := map[string]Hook{}
	for _, h := range of.Hooks {
		oh[hk(h)] = h
	}
	nh := map[string]bool{}
	for _, h := range nf.Hooks {
		k := hk(h)
		nh[k] = true
		o, had := oh[k]
		switch {
		case !had && h.Matcher == "*":
			wide("new hook %s — MATCHES EVERY TOOL CALL", k)
		case !had:
			wide("new hook %s", k)
		default:
			if onErr(o.OnError) != onErr(h.OnError) {
				wide("hook %s: on_error %s → %s", k, onErr(o.OnError), onErr(h.OnError))
			}
			if o.TimeoutMS != h.TimeoutMS {
				wide("hook %s: timeout_ms %d → %d", k, o.TimeoutMS, h.TimeoutMS)
			}
		}
	}
	for _, h := range of.Hooks {
		if !nh[hk(h)] {
			narrow("hook %s removed", hk(h))
		}
	}

	// MCP servers, by name and transport shape.
	om := map[string]MCPServer{}
	for _, s := range of.MCPServers {
		om[s.Name] = s
	}
	nm := map[string]bool{}
	for _, s := range nf.MCPServers {
		nm[s.Name] = true
		o, had := om[s.Name]
		switch {
		case !had:
			wide("new MCP server %s (%s)", s.Name, mcpShape(s))
		case o.Type != s.Type || o.Command != s.Command || !slices.Equal(o.Args, s.Args) || o.URL != s.URL:
			wide("MCP server %s changed: %s → %s", s.Name, mcpShape(o), mcpShape(s))
		}
		if had {
			diffEnv(o.Env, s.Env, "MCP server "+s.Name, wide, narrow)
		}
	}
	for _, s := range of.MCPServers {
		if !nm[s.Name] {
			narrow("MCP server %s removed", s.Name)
		}
	}

	// Prompt.
	op, np := of.Prompt, nf.Prompt
	switch {
	case op == nil && np != nil:
		if np.Dynamic {
			wide("new dynamic prompt (%d bytes static, max %s per turn)", len(np.Text), maxBytes(np.MaxBytes))
		} else {
			wide("new prompt text (%d bytes)", len(np.Text))
		}
	case op != nil && np == nil:
		narrow("prompt removed")
	case op != nil && np != nil:
		if !op.Dynamic && np.Dynamic {
			wide("prompt is now dynamic")
		} else if op.Dynamic && !np.Dynamic {
			narrow("prompt is no longer dynamic")
		}
		if len(np.Text) > len(op.Text) {
			wide("prompt text grew %d → %d bytes", len(op.Text), len(np.Text))
		} else if op.Text != np.Text {
			wide("prompt text changed (%d → %d bytes)", len(op.Text), len(np.Text))
		}
		// 0 is the host default, the widest cap.
		if np.MaxBytes != op.MaxBytes {
			if op.MaxBytes != 0 && (np.MaxBytes == 0 || np.MaxBytes > op.MaxBytes) {
				wide("prompt max_bytes %s → %s", maxBytes(op.MaxBytes), maxBytes(np.MaxBytes))
			} else {
				narrow("prompt max_bytes %s → %s", maxBytes(op.MaxBytes), maxBytes(np.MaxBytes))
			}
		}
	}

	// Commands.
	oc := map[string]bool{}
	for _, x := range of.Commands {
		oc[x.Name] = true
	}
	ncm := map[string]bool{}
	for _, x := range nf.Commands {
		ncm[x.Name] = true
		if !oc[x.Name] {
			wide("new command %s:%s", next.Name, x.Name)
		}
	}
	for _, x := range of.Commands {
		if !ncm[x.Name] {
			narrow("command %s removed", x.Name)
		}
	}

	// Opt-ins.
	for _, o := range []struct {
		name     string
		was, now bool
	}{{"skills", of.Skills, nf.Skills}, {yep.CapStatus, of.Status, nf.Status}, {yep.CapUIAsk, of.UIAsk, nf.UIAsk}, {yep.CapTrace, of.Trace, nf.Trace}} {
		if !o.was && o.now {
			wide("new opt-in %s", o.name)
		} else if o.was && !o.now {
			narrow("opt-in %s dropped", o.name)
		}
	}

	// Config fields: new secret or env fields widen what reaches the server.
	ofs, _ := old.ConfigFields()
	nfs, _ := next.ConfigFields()
	ocf := map[string]ConfigField{}
	for _, x := range ofs {
		ocf[x.Name] = x
	}
	for _, x := range nfs {
		o, had := ocf[x.Name]
		switch {
		case !had && (x.Secret || x.Env != ""):
			wide("new config field %s%s", x.Name, fieldMarks(x))
		case !had:
			note("new config field %s", x.Name)
		case o.Secret != x.Secret || o.Env != x.Env:
			wide("config field %s: now%s", x.Name, fieldMarks(x))
		}
		delete(ocf, x.Name)
	}
	for _, n := range slices.Sorted(maps.Keys(ocf)) {
		note("config field %s removed", n)
	}
	if !jsonEqual(of.ConfigSchema, nf.ConfigSchema) && len(ofs)+len(nfs) == 0 {
		note("config schema changed")
	}

	// Prebuilt artifacts: a different binary is a different program.
	for _, t := range slices.Sorted(maps.Keys(nf.Artifacts)) {
		if o, had := of.Artifacts[t]; !had {
			wide("new prebuilt binary for %s", t)
		} else if o != nf.Artifacts[t] {
			wide("prebuilt binary for %s changed", t)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(of.Artifacts)) {
		if _, has := nf.Artifacts[t]; !has {
			narrow("prebuilt binary for %s removed", t)
		}
	}
	return c
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

func diffEnv(old, next map[string]string, what string, wide, narrow func(string, ...any)) {
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if v, had := old[k]; !had {
			wide("%s env %s added", what, k)
		} else if v != next[k] {
			wide("%s env %s changed", what, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, has := next[k]; !has {
			narrow("%s env %s removed", what, k)
		}
	}
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
