// Package builtin holds yolop's always-on built-in capabilities. The
// [Extensions] capability lets the agent drive extension setup with the
// same code paths as the `yolop ext` CLI ([manager.Manager]), and write
// an extension for itself (scaffold, install, doctor, enable, reload);
// installing through it, and any update that widens a grant, still needs
// the user's consent, asked through the session's ask sink.
package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/doctor"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// ExtensionsName is the capability ref of [Extensions].
const ExtensionsName = "builtin:extensions"

// askExt is the name consent questions are asked under.
const askExt = "extensions"

// ExtensionsOptions configure [Extensions]. Every field may be nil.
type ExtensionsOptions struct {
	// Ask puts the install consent question to the user. Nil refuses
	// every install (and any update that widens a grant).
	Ask host.AskSink
	// Activate, if set, makes a newly enabled extension live in the
	// running session (host.Session.Activate); otherwise it starts with
	// the next session.
	Activate func(host.Grant)
	// Deactivate, if set, takes a disabled or removed extension out of
	// the running session (host.Session.Deactivate).
	Deactivate func(name string) bool
	// WorkspaceRoot is where scaffold_extension writes packages (relative
	// directories resolve against it, and none may leave it), and where
	// the packages doctor_extension checks by path must be. Empty refuses
	// both.
	WorkspaceRoot string
	// Reload restarts an extension's server in place in the running
	// session, within its grant (host.Session.Reload). Nil refuses
	// reload_extension: there is no session to reload in.
	Reload func(ctx context.Context, name string) error
	// InSession reports whether the running session runs the extension
	// name, and whether it loaded it in place (a package directory given
	// to the session, not an installed extension). Nil means the session
	// runs none.
	InSession func(name string) (running, inPlace bool)
	// Doctor runs the doctor (yolop.dev/doctor) on the installed
	// extension name or, when name is empty, on the package directory
	// dir, as `yolop ext doctor` does. Nil refuses doctor_extension.
	Doctor func(ctx context.Context, name, dir string) (*doctor.Report, error)
}

// Extensions is the built-in `extensions` capability: tools
// install_extension, update_extension, list_extensions,
// enable_extension, disable_extension, remove_extension, and the
// self-writing loop's scaffold_extension (what `yolop ext new` does),
// doctor_extension (`yolop ext doctor`) and reload_extension (the REPL's
// /reload). Its methods are safe for concurrent use.
type Extensions struct {
	host.Base
	m  *manager.Manager
	mu sync.Mutex
	o  ExtensionsOptions
}

// NewExtensions returns the capability over m.
func NewExtensions(m *manager.Manager, o ExtensionsOptions) *Extensions {
	return &Extensions{m: m, o: o}
}

// SetAsk sets the ask sink used for install consent (for front-ends that
// create their sink after the capability).
func (e *Extensions) SetAsk(s host.AskSink) {
	e.mu.Lock()
	e.o.Ask = s
	e.mu.Unlock()
}

// SetSession sets the hooks that make enable/disable live in a running
// session.
func (e *Extensions) SetSession(activate func(host.Grant), deactivate func(string) bool) {
	e.mu.Lock()
	e.o.Activate, e.o.Deactivate = activate, deactivate
	e.mu.Unlock()
}

func (e *Extensions) opts() ExtensionsOptions {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.o
}

// Name implements [host.Capability].
func (e *Extensions) Name() string { return ExtensionsName }

var (
	sourceSchema  = json.RawMessage(`{"type":"object","properties":{"source":{"type":"string","description":"a package directory, <git-url>[@rev], crates.io:<crate>[@version] or a bare extension name"}},"required":["source"],"additionalProperties":false}`)
	nameSchema    = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the extension name, as list_extensions shows it"}},"required":["name"],"additionalProperties":false}`)
	installSchema = json.RawMessage(`{"type":"object","properties":{"source":{"type":"string","description":"a package directory, <git-url>[@rev], crates.io:<crate>[@version] or a bare extension name"},"enable":{"type":"boolean","default":false,"description":"once the user approved and it is installed, enable it too: its tools, hooks and prompt are live from the next turn"}},"required":["source"],"additionalProperties":false}`)
	doctorSchema  = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"an installed extension's name, as list_extensions shows it"},"path":{"type":"string","description":"a package directory inside the workspace (relative paths resolve against it)"}},"additionalProperties":false}`)
	emptySchema   = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
)

// Tools implements [host.Capability].
func (e *Extensions) Tools() []host.ToolDef {
	return []host.ToolDef{
		// install_extension and update_extension ask the user themselves
		// (the contribution summary or diff), so they carry no approval
		// hint: the user would be asked twice.
		{Name: "install_extension", InputSchema: installSchema, NeverDefer: true, Risk: "high",
			Description: "Install (or update) a yolop extension. The user is shown what it contributes and must approve it; nothing is installed otherwise. With enable: true it is also enabled, live from the next turn; otherwise enable it afterwards with enable_extension."},
		{Name: "update_extension", InputSchema: nameSchema, NeverDefer: true, Risk: "high",
			Description: "Fetch an installed extension's source again and apply the new version. A change that widens what the user approved is shown to the user, who must approve it (nothing changes otherwise); one that does not is applied without asking and the result says what changed. A running extension switches to the new version from the next turn."},
		{Name: "list_extensions", InputSchema: emptySchema, NeverDefer: true, Risk: "low",
			Description: "List installed extensions: version, source, enabled, health, tools, and which config fields are set (never their values)."},
		{Name: "enable_extension", InputSchema: nameSchema, NeverDefer: true, Risk: "medium",
			Description: "Enable an installed extension; it refuses one whose files changed since approval."},
		{Name: "disable_extension", InputSchema: nameSchema, NeverDefer: true, Risk: "low",
			Description: "Disable an extension (it stays installed)."},
		{Name: "remove_extension", InputSchema: nameSchema, NeverDefer: true, Risk: "medium",
			Description: "Remove an installed extension and its settings entry."},
		{Name: "scaffold_extension", InputSchema: scaffoldSchema, NeverDefer: true, Streaming: true, Risk: "medium",
			Description: "Write a new extension package in the workspace (what `yolop ext new` does): plugin.json declaring exactly the requested facets and a server that installs and passes doctor as written; go and rust packages are built too. Then fill in the handle_* functions the result names, install it with install_extension (the user approves), check it with doctor_extension, enable it with enable_extension, and after each later edit of its code call reload_extension."},
		{Name: "doctor_extension", InputSchema: doctorSchema, NeverDefer: true, Risk: "low",
			Description: "Check an extension as `yolop ext doctor` does: spawn its server as a session would and grade the handshake, every declared tool, hook and command against its manifest (pass, warn or fail per check). Give name (an installed extension) or path (a package directory in the workspace). A failed check makes the result an error."},
		{Name: "reload_extension", InputSchema: nameSchema, NeverDefer: true, Risk: "medium",
			Description: "Restart an extension's server in this session so edits to its code take effect now, within what the user approved. An extension installed from a package directory has an edit of its plugin.json that widens nothing re-pinned first (no question); one that widens the grant is refused — call update_extension, which asks the user."},
	}
}

// CallTool implements [host.Capability]. Failures are tool errors the
// agent reads, not protocol errors.
func (e *Extensions) CallTool(ctx context.Context, call host.ToolCall, update func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	var args struct {
		Source string `json:"source"`
		Name   string `json:"name"`
		Path   string `json:"path"`
		Enable bool   `json:"enable"`
	}
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &args); err != nil {
			return toolErr(fmt.Errorf("%s: arguments must be a JSON object: %w", call.Name, err)), nil
		}
	}
	need := func(field, v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%s needs %q", call.Name, field)
		}
		return nil
	}
	o := e.opts()
	switch call.Name {
	case "scaffold_extension":
		return e.scaffold(ctx, call.Args, o, update, call.ID), nil
	case "install_extension":
		if err := need("source", args.Source); err != nil {
			return toolErr(err), nil
		}
		return e.install(ctx, args.Source, args.Enable, o), nil
	case "update_extension":
		if err := need("name", args.Name); err != nil {
			return toolErr(err), nil
		}
		return e.update(ctx, args.Name, o), nil
	case "reload_extension":
		if err := need("name", args.Name); err != nil {
			return toolErr(err), nil
		}
		return e.reload(ctx, args.Name, o), nil
	case "doctor_extension":
		return e.doctor(ctx, args.Name, args.Path, o), nil
	case "list_extensions":
		list, err := e.m.List(ctx)
		if err != nil {
			return toolErr(err), nil
		}
		data, _ := json.Marshal(list)
		return yep.ToolResult{Output: listText(list), Data: data}, nil
	case "enable_extension":
		if err := need("name", args.Name); err != nil {
			return toolErr(err), nil
		}
		g, err := e.m.EnableWith(ctx, args.Name, o.Ask)
		if err != nil {
			return toolErr(err), nil
		}
		if o.Activate != nil {
			o.Activate(g)
			return yep.ToolResult{Output: fmt.Sprintf("enabled %s; its tools are live from the next turn", args.Name)}, nil
		}
		return yep.ToolResult{Output: fmt.Sprintf("enabled %s; it starts with the next session", args.Name)}, nil
	case "disable_extension":
		if err := need("name", args.Name); err != nil {
			return toolErr(err), nil
		}
		changed, err := e.m.Disable(ctx, args.Name)
		if err != nil {
			return toolErr(err), nil
		}
		if o.Deactivate != nil {
			o.Deactivate(args.Name)
		}
		if !changed {
			return yep.ToolResult{Output: fmt.Sprintf("%s was not enabled", args.Name)}, nil
		}
		return yep.ToolResult{Output: fmt.Sprintf("disabled %s", args.Name)}, nil
	case "remove_extension":
		if err := need("name", args.Name); err != nil {
			return toolErr(err), nil
		}
		if err := e.m.Remove(ctx, args.Name); err != nil {
			return toolErr(err), nil
		}
		if o.Deactivate != nil {
			o.Deactivate(args.Name)
		}
		return yep.ToolResult{Output: fmt.Sprintf("removed %s", args.Name)}, nil
	}
	return yep.ToolResult{}, fmt.Errorf("%w: builtin:extensions has no tool %q", yep.ErrMethodNotFound, call.Name)
}

// consent asks the user through the ask sink; a missing sink refuses,
// naming terminal, the command the user can run instead.
func consent(o ExtensionsOptions, lead func(p manager.Proposal) string, terminal string) manager.Consent {
	return func(ctx context.Context, p manager.Proposal) error {
		if o.Ask == nil {
			return fmt.Errorf("%w: this needs the user's consent and this session cannot ask; the user can run `%s` in a terminal", packaging.ErrNotApproved, terminal)
		}
		verb := "Install"
		if !p.Fresh {
			verb = "Update"
		}
		q := fmt.Sprintf("%s\n%s\n%s %s? [y/N]", lead(p), strings.TrimRight(p.Text, "\n"), verb, p.Name)
		ans, err := o.Ask.Ask(ctx, askExt, yep.UIAskParams{Prompt: q})
		if err != nil {
			return fmt.Errorf("%w: asking the user failed: %w", packaging.ErrNotApproved, err)
		}
		if ans.Cancelled || !yes(ans.Answer) {
			return fmt.Errorf("%w: the user declined", packaging.ErrNotApproved)
		}
		return nil
	}
}

// install asks the user through the ask sink; a missing sink refuses.
// With enable, an approved install is enabled and activated too.
func (e *Extensions) install(ctx context.Context, source string, enable bool, o ExtensionsOptions) yep.ToolResult {
	lead := func(p manager.Proposal) string {
		return fmt.Sprintf("The agent wants to install an extension from %s.", p.Source)
	}
	source = workspaceSource(o.WorkspaceRoot, source)
	out, err := e.m.Install(ctx, manager.InstallRequest{Source: source, Consent: consent(o, lead, "yolop ext install "+source), Enable: enable, Ask: o.Ask})
	if err != nil {
		if out != nil { // installed; enabling it failed
			return yep.ToolResult{IsError: true, Output: OutcomeText(out) + "\n" + err.Error()}
		}
		return toolErr(err)
	}
	text := OutcomeText(out)
	if out.Grant != nil {
		text += fmt.Sprintf("\nenabled %s; %s", out.Name, e.goLive(*out.Grant, !out.Unchanged, o))
	}
	return yep.ToolResult{Output: text}
}

// workspaceSource resolves a relative directory source against the
// workspace, as the coding tools resolve their paths, not against the
// process's directory: "./x" and "../x", and a bare name or relative path
// that is a directory in the workspace (which would otherwise read as a
// crates.io name). Anything else is returned as it is.
func workspaceSource(ws, source string) string {
	if ws == "" || source == "" || filepath.IsAbs(source) || strings.HasPrefix(source, "~") || strings.Contains(source, "://") {
		return source
	}
	if source == "." || source == ".." || strings.HasPrefix(source, "./") || strings.HasPrefix(source, "../") {
		return filepath.Join(ws, source)
	}
	if fi, err := os.Stat(filepath.Join(ws, source)); err == nil && fi.IsDir() {
		return filepath.Join(ws, source)
	}
	return source
}

// goLive makes the enabled extension of grant g live in the running
// session, replacing the one running under its name when changed says
// its approval changed, and says when it is live.
func (e *Extensions) goLive(g host.Grant, changed bool, o ExtensionsOptions) string {
	running, inPlace := inSession(o, g.Name)
	switch {
	case o.Activate == nil:
		return "it starts with the next session"
	case inPlace:
		return fmt.Sprintf("this session runs %s from a package directory loaded in place, so the installed one starts with the next session", g.Name)
	case running && !changed:
		return "it is already running in this session"
	case running:
		if o.Deactivate != nil {
			o.Deactivate(g.Name)
		}
		o.Activate(g)
		return "the new version replaces the running one from the next turn"
	}
	o.Activate(g)
	return "its tools are live from the next turn"
}

func inSession(o ExtensionsOptions, name string) (running, inPlace bool) {
	if o.InSession == nil {
		return false, false
	}
	return o.InSession(name)
}

// update re-fetches name's recorded source; only a widening change asks
// the user (the agent can trigger an update, never approve one). A
// running extension switches to the new version from the next turn, as
// /enable makes one live.
func (e *Extensions) update(ctx context.Context, name string, o ExtensionsOptions) yep.ToolResult {
	lead := func(p manager.Proposal) string {
		return fmt.Sprintf("The agent wants to update the extension %s from %s.", p.Name, p.Source)
	}
	out, err := e.m.Update(ctx, name, consent(o, lead, "yolop ext update "+name))
	if err != nil {
		msg := err.Error()
		if errors.Is(err, packaging.ErrNotApproved) {
			msg = fmt.Sprintf("not updated: %s; %s stays as it was (installed, and running if it was)", msg, name)
		}
		return yep.ToolResult{IsError: true, Output: msg}
	}
	text := OutcomeText(out)
	if out.Unchanged {
		return yep.ToolResult{Output: text}
	}
	if running, inPlace := inSession(o, name); running && !inPlace && o.Activate != nil {
		g, err := e.m.EnableWith(ctx, name, o.Ask)
		if err != nil {
			return yep.ToolResult{IsError: true, Output: text + "\nthe running session keeps the old version: " + err.Error()}
		}
		text += "\n" + e.goLive(g, true, o)
	}
	return yep.ToolResult{Output: text}
}

// reload restarts name's server in the running session. An installed
// path source is refreshed first ([manager.Manager.Refresh]): a plugin.json
// edit that widens nothing is re-pinned without asking and the session
// switches to the re-pinned grant from the next turn; one that widens is
// refused, the running server left alone. Anything else — another
// source, a package loaded in place — just restarts.
func (e *Extensions) reload(ctx context.Context, name string, o ExtensionsOptions) yep.ToolResult {
	if o.Reload == nil {
		return toolErr(fmt.Errorf("reload_extension: this session cannot restart extensions; the user can run /reload %s in a yolop session", name))
	}
	running, inPlace := inSession(o, name)
	if !running {
		return toolErr(fmt.Errorf("reload_extension: %s is not running in this session; enable it with enable_extension (it is live from the next turn), or see list_extensions", name))
	}
	if !inPlace {
		out, err := e.m.Refresh(ctx, name)
		if err != nil {
			return toolErr(err)
		}
		if out != nil && !out.Unchanged {
			g, err := e.m.EnableWith(ctx, name, o.Ask)
			if err != nil {
				return toolErr(fmt.Errorf("reload_extension: %s was re-pinned, but %w", name, err))
			}
			return yep.ToolResult{Output: fmt.Sprintf("re-pinned %s to its edited plugin.json (it widens nothing):\n%s\n%s",
				name, strings.TrimRight(out.Change.String(), "\n"), e.goLive(g, true, o))}
		}
	}
	if err := o.Reload(ctx, name); err != nil {
		return toolErr(fmt.Errorf("reload_extension: %s did not start again: %w; fix it (doctor_extension shows why) and call reload_extension again", name, err))
	}
	return yep.ToolResult{Output: fmt.Sprintf("reloaded %s: its server restarted and runs the code as it is now", name)}
}

// doctor runs the doctor on an installed extension (name) or a package
// directory in the workspace (path) and returns its report; a failed
// check makes the result an error.
func (e *Extensions) doctor(ctx context.Context, name, path string, o ExtensionsOptions) yep.ToolResult {
	if (name == "") == (path == "") {
		return toolErr(errors.New("doctor_extension needs exactly one of name (an installed extension) and path (a package directory)"))
	}
	if o.Doctor == nil {
		return toolErr(errors.New("doctor_extension is not available in this session; the user can run `yolop ext doctor <name|path>`"))
	}
	dir := ""
	if path != "" {
		if o.WorkspaceRoot == "" {
			return toolErr(fmt.Errorf("doctor_extension: this session has no workspace; the user can run `yolop ext doctor %s`", path))
		}
		var err error
		if dir, err = within(o.WorkspaceRoot, path, "doctor_extension", true); err != nil {
			return toolErr(err)
		}
	} else if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return toolErr(fmt.Errorf("doctor_extension: %q is a path, not an extension name; pass it as path", name))
	}
	rep, err := o.Doctor(ctx, name, dir)
	if err != nil {
		return toolErr(err)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		return toolErr(fmt.Errorf("doctor_extension: writing the report: %w", err))
	}
	var data strings.Builder
	_ = rep.WriteJSON(&data)
	res := yep.ToolResult{Output: b.String(), Data: json.RawMessage(data.String()), IsError: !rep.OK()}
	if !rep.OK() {
		res.Output += fmt.Sprintf("\n%s failed %d check(s): fix what they name and call doctor_extension again", rep.Extension, rep.Failed)
	}
	return res
}

// yes reports whether an answer accepts: y or yes, any case.
func yes(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "y" || s == "yes"
}

func toolErr(err error) yep.ToolResult {
	if errors.Is(err, packaging.ErrNotApproved) {
		return yep.ToolResult{IsError: true, Output: "not installed: " + err.Error()}
	}
	return yep.ToolResult{IsError: true, Output: err.Error()}
}

// OutcomeText renders an install or update outcome for people and agents.
func OutcomeText(out *manager.Outcome) string {
	var b strings.Builder
	switch {
	case out.Held:
		fmt.Fprintf(&b, "%s stays at %s (%s): its update is in the cooldown", out.Name, out.Entry.Version, out.Source)
	case out.Unchanged:
		fmt.Fprintf(&b, "%s is up to date (%s)", out.Name, out.Source)
	case out.Fresh:
		fmt.Fprintf(&b, "installed %s %s from %s", out.Name, out.Entry.Version, out.Source)
	default:
		fmt.Fprintf(&b, "updated %s to %s from %s", out.Name, out.Entry.Version, out.Source)
		if !out.Change.Widens() && len(out.Change.Narrowing) > 0 {
			b.WriteString("\nnote: the update narrows the grant, applied without asking:\n" + strings.TrimRight(out.Change.String(), "\n"))
		} else if !out.Change.Widens() && len(out.Change.Notes) > 0 {
			b.WriteString("\n" + strings.TrimRight(out.Change.String(), "\n"))
		}
	}
	if out.Entry.Commit != "" && !out.Unchanged {
		fmt.Fprintf(&b, " at commit %s", out.Entry.Commit)
	}
	for _, n := range out.Notes { // the update cooldown
		b.WriteString("\nnote: " + n)
	}
	for _, w := range out.Warnings {
		b.WriteString("\nwarning: " + w)
	}
	if !out.Enabled && !out.Unchanged {
		fmt.Fprintf(&b, "\nenable it with `yolop ext enable %s` (or /enable %s in a session)", out.Name, out.Name)
	}
	return b.String()
}

// listText renders list output, one extension per block.
func listText(list []manager.Info) string {
	if len(list) == 0 {
		return "no extensions installed; install one with `yolop ext install <source>`"
	}
	var b strings.Builder
	for i, in := range list {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(InfoText(in))
	}
	return b.String()
}

// InfoText renders one extension for list output.
func InfoText(in manager.Info) string { return InfoTextStyled(in, nil) }

// InfoTextStyled is [InfoText] with the health word passed through style
// (e.g. to colour it on a terminal); nil leaves it plain.
func InfoTextStyled(in manager.Info, style func(string) string) string {
	if style == nil {
		style = func(s string) string { return s }
	}
	var b strings.Builder
	enabled := "disabled"
	if in.Enabled {
		enabled = "enabled"
	}
	fmt.Fprintf(&b, "%s %s  %s  %s\n", in.Name, orDash(in.Version), enabled, style(in.Health))
	src := in.Source
	switch {
	case !in.Installed:
		src = "(not installed)"
	case in.PathSource:
		src = "path (live, not hash-verified) " + in.Source
	case in.Commit != "":
		src = fmt.Sprintf("%s (commit %s)", in.Source, in.Commit)
	}
	fmt.Fprintf(&b, "  source: %s\n", src)
	if len(in.Tools) > 0 {
		fmt.Fprintf(&b, "  tools: %s\n", strings.Join(in.Tools, ", "))
	} else {
		b.WriteString("  tools: none\n")
	}
	if len(in.Config) > 0 {
		var fs []string
		for _, f := range in.Config {
			st := "unset"
			if f.Set {
				st = "set"
			}
			mark := ""
			if f.Secret {
				mark = " secret"
			}
			if f.Required {
				mark += " required"
			}
			fs = append(fs, fmt.Sprintf("%s (%s%s)", f.Name, st, mark))
		}
		fmt.Fprintf(&b, "  config: %s\n", strings.Join(fs, ", "))
	}
	for _, w := range in.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
