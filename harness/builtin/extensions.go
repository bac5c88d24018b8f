// Package builtin holds yolop's always-on built-in capabilities. The
// [Extensions] capability lets the agent drive extension setup with the
// same code paths as the `yolop ext` CLI ([manager.Manager]); installing
// through it still needs the user's consent, asked through the session's
// ask sink.
package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
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
	// directories resolve against it, and none may leave it). Empty
	// refuses scaffolding.
	WorkspaceRoot string
}

// Extensions is the built-in `extensions` capability: tools
// install_extension, list_extensions, enable_extension,
// disable_extension, remove_extension and scaffold_extension (what `yolop
// ext new` does, so the agent can author an extension for itself). Its methods are safe for
// concurrent use.
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
	sourceSchema = json.RawMessage(`{"type":"object","properties":{"source":{"type":"string","description":"a package directory, <git-url>[@rev], crates.io:<crate>[@version] or a bare extension name"}},"required":["source"],"additionalProperties":false}`)
	nameSchema   = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the extension name, as list_extensions shows it"}},"required":["name"],"additionalProperties":false}`)
	emptySchema  = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
)

// Tools implements [host.Capability].
func (e *Extensions) Tools() []host.ToolDef {
	return []host.ToolDef{
		{Name: "install_extension", InputSchema: sourceSchema, NeverDefer: true, Approval: "always_ask", Risk: "high",
			Description: "Install (or update) a yolop extension. The user is shown what it contributes and must approve it; nothing is installed otherwise. Enable it afterwards with enable_extension."},
		{Name: "list_extensions", InputSchema: emptySchema, NeverDefer: true, Risk: "low",
			Description: "List installed extensions: version, source, enabled, health, tools, and which config fields are set (never their values)."},
		{Name: "enable_extension", InputSchema: nameSchema, NeverDefer: true, Risk: "medium",
			Description: "Enable an installed extension; it refuses one whose files changed since approval."},
		{Name: "disable_extension", InputSchema: nameSchema, NeverDefer: true, Risk: "low",
			Description: "Disable an extension (it stays installed)."},
		{Name: "remove_extension", InputSchema: nameSchema, NeverDefer: true, Risk: "medium",
			Description: "Remove an installed extension and its settings entry."},
		{Name: "scaffold_extension", InputSchema: scaffoldSchema, NeverDefer: true, Streaming: true, Risk: "medium",
			Description: "Write a new extension package in the workspace (what `yolop ext new` does): plugin.json declaring exactly the requested facets and a server that installs and passes doctor as written; go and rust packages are built too. Then fill in the handle_* functions the result names, install it with install_extension (the user approves), check it with `yolop ext doctor <name>` and ask the user to enable it."},
	}
}

// CallTool implements [host.Capability]. Failures are tool errors the
// agent reads, not protocol errors.
func (e *Extensions) CallTool(ctx context.Context, call host.ToolCall, update func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	var args struct {
		Source string `json:"source"`
		Name   string `json:"name"`
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
		return e.install(ctx, args.Source, o)
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

// install asks the user through the ask sink; a missing sink refuses.
func (e *Extensions) install(ctx context.Context, source string, o ExtensionsOptions) (yep.ToolResult, error) {
	consent := func(ctx context.Context, p manager.Proposal) error {
		if o.Ask == nil {
			return fmt.Errorf("%w: installing needs the user's consent and this session cannot ask; the user can run `yolop ext install %s` in a terminal", packaging.ErrNotApproved, source)
		}
		verb := "Install"
		if !p.Fresh {
			verb = "Update"
		}
		q := fmt.Sprintf("The agent wants to install an extension from %s.\n%s\n%s %s? [y/N]", p.Source, strings.TrimRight(p.Text, "\n"), verb, p.Name)
		ans, err := o.Ask.Ask(ctx, askExt, yep.UIAskParams{Prompt: q})
		if err != nil {
			return fmt.Errorf("%w: asking the user failed: %w", packaging.ErrNotApproved, err)
		}
		if ans.Cancelled || !yes(ans.Answer) {
			return fmt.Errorf("%w: the user declined", packaging.ErrNotApproved)
		}
		return nil
	}
	out, err := e.m.Install(ctx, manager.InstallRequest{Source: source, Consent: consent})
	if err != nil {
		return toolErr(err), nil
	}
	return yep.ToolResult{Output: OutcomeText(out)}, nil
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
