package host

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"yolop.dev/core/yep"
)

// MaxHookSubscriptions caps the hook subscriptions of one extension.
const MaxHookSubscriptions = 16

// A Refusal is one part of a handshake the clamp refused because it is
// wider than the approved manifest.
type Refusal struct {
	// Kind is "tool", "hook", "mcp_server", "prompt", "command",
	// "provider" or "capability".
	Kind string
	// Name names the refused item.
	Name string
	// Reason says why, for a person.
	Reason string
}

func (r Refusal) String() string { return fmt.Sprintf("%s %q refused: %s", r.Kind, r.Name, r.Reason) }

// contributions is what a server contributes after the clamp.
type contributions struct {
	version    yep.Version
	serverName string
	tools      []ToolGrant
	hooks      []HookGrant
	mcp        []yep.MCPServerDecl
	prompt     string // static text in effect
	hasPrompt  bool
	dynamic    bool
	commands   []CommandGrant
	streaming  bool
	status     bool
	uiAsk      bool
	trace      bool
	config     bool
	provider   *ProviderInfo // nil when none is announced or none is left
	refusals   []Refusal
	warnings   []string
}

// clamp narrows a handshake result to the grant. Whatever the handshake
// declares beyond the grant is refused and recorded.
func clamp(g *Grant, res *yep.InitializeResult, v yep.Version) *contributions {
	c := &contributions{version: v, serverName: res.Name}
	refuse := func(kind, name, reason string) {
		c.refusals = append(c.refusals, Refusal{Kind: kind, Name: name, Reason: reason})
	}
	caps := res.Capabilities
	params := res.CapabilityParams
	if params == nil {
		params = yep.CapabilityParams{}
	}

	// Tools: the handshake names the served tools; definitions come from
	// the grant.
	var served []yep.ToolDecl
	if ok, err := params.Decode(yep.CapTools, &served); err != nil {
		refuse("capability", yep.CapTools, fmt.Sprintf("malformed tools params: %v", err))
	} else if !ok {
		c.tools = slices.Clone(g.Tools) // no list: every approved tool
	} else {
		seen := map[string]bool{}
		for _, d := range served {
			if seen[d.Name] {
				continue
			}
			seen[d.Name] = true
			i := slices.IndexFunc(g.Tools, func(t ToolGrant) bool { return t.Name == d.Name })
			if i < 0 {
				refuse("tool", d.Name, "not declared in the approved manifest")
				continue
			}
			c.tools = append(c.tools, g.Tools[i])
		}
	}
	c.streaming = caps.Has(yep.CapStreaming)

	// Hooks: subscriptions must be approved (event and matcher).
	var subs []yep.HookSubscription
	ok, err := params.Decode(yep.CapHooks, &subs)
	switch {
	case err != nil:
		refuse("capability", yep.CapHooks, fmt.Sprintf("malformed hooks params: %v", err))
	case !ok && caps.Has(yep.CapHooks):
		for _, h := range g.Hooks {
			subs = append(subs, yep.HookSubscription{Event: h.Event, Matcher: h.Matcher})
		}
	}
	for _, s := range subs {
		name := s.Event + " " + s.Matcher
		i := slices.IndexFunc(g.Hooks, func(h HookGrant) bool { return h.Event == s.Event && h.Matcher == s.Matcher })
		if i < 0 {
			refuse("hook", name, "subscription not declared in the approved manifest")
			continue
		}
		if reason := checkMatcher(s.Matcher); reason != "" {
			refuse("hook", name, reason)
			continue
		}
		if slices.ContainsFunc(c.hooks, func(h HookGrant) bool { return h.Event == s.Event && h.Matcher == s.Matcher }) {
			continue
		}
		if len(c.hooks) >= MaxHookSubscriptions {
			refuse("hook", name, fmt.Sprintf("over the limit of %d subscriptions per extension", MaxHookSubscriptions))
			continue
		}
		if s.Matcher == "*" && yep.HookToolEvent(s.Event) {
			c.warnings = append(c.warnings, fmt.Sprintf("hook %s matches every tool (\"*\")", s.Event))
		}
		c.hooks = append(c.hooks, g.Hooks[i])
	}

	// MCP servers: by name and transport shape.
	var mcps []yep.MCPServerDecl
	if _, err := params.Decode(yep.CapMCPServers, &mcps); err != nil {
		refuse("capability", yep.CapMCPServers, fmt.Sprintf("malformed mcp_servers params: %v", err))
	}
	for _, m := range mcps {
		i := slices.IndexFunc(g.MCPServers, func(a MCPServerGrant) bool { return a.Name == m.Name })
		if i < 0 {
			refuse("mcp_server", m.Name, "not declared in the approved manifest")
			continue
		}
		if reason := mcpMismatch(g.MCPServers[i], m); reason != "" {
			refuse("mcp_server", m.Name, reason)
			continue
		}
		c.mcp = append(c.mcp, m)
	}

	// Prompt: opt-in and size.
	var pd yep.PromptDecl
	hasPromptParams, err := params.Decode(yep.CapPrompt, &pd)
	if err != nil {
		refuse("capability", yep.CapPrompt, fmt.Sprintf("malformed prompt params: %v", err))
	}
	wantsPrompt := caps.Has(yep.CapPrompt) || hasPromptParams
	wantsDynamic := caps.Has(yep.CapDynamicPrompt) || pd.Dynamic
	switch {
	case g.Prompt == nil:
		if wantsPrompt || wantsDynamic {
			refuse("prompt", g.Name, "the approved manifest contributes no prompt")
		}
	default:
		c.hasPrompt = true
		c.prompt = g.Prompt.Text
		if pd.Static != "" {
			if len(pd.Static) > g.Prompt.maxBytes() {
				refuse("prompt", g.Name, fmt.Sprintf("static prompt of %d bytes exceeds the approved %d", len(pd.Static), g.Prompt.maxBytes()))
			} else {
				c.prompt = pd.Static
			}
		}
		if wantsDynamic {
			if g.Prompt.Dynamic {
				c.dynamic = true
			} else {
				refuse("prompt", g.Name, "dynamic prompt not approved in the manifest")
			}
		}
	}

	// Commands.
	var cmds []yep.CommandDecl
	ok, err = params.Decode(yep.CapCommands, &cmds)
	switch {
	case err != nil:
		refuse("capability", yep.CapCommands, fmt.Sprintf("malformed commands params: %v", err))
	case !ok && caps.Has(yep.CapCommands):
		c.commands = slices.Clone(g.Commands)
	}
	for _, cd := range cmds {
		i := slices.IndexFunc(g.Commands, func(a CommandGrant) bool { return a.Name == cd.Name })
		if i < 0 {
			refuse("command", cd.Name, "not declared in the approved manifest")
			continue
		}
		c.commands = append(c.commands, g.Commands[i])
	}

	// Reverse-direction opt-ins: effective only when both approved and
	// declared.
	optIn := func(token string, granted bool) bool {
		if !caps.Has(token) {
			return false
		}
		if !granted {
			refuse("capability", token, "opt-in not approved in the manifest")
			return false
		}
		return true
	}
	c.status = optIn(yep.CapStatus, g.Status)
	c.uiAsk = optIn(yep.CapUIAsk, g.UIAsk)
	c.trace = optIn(yep.CapTrace, g.Trace)
	c.config = caps.Has(yep.CapConfig)
	c.provider = clampProvider(g, caps, params, refuse)
	return c
}

// checkMatcher refuses a match-all glob not spelled "*", and an empty one.
func checkMatcher(m string) string {
	if m == "" {
		return `empty tool-name matcher; a match-all matcher must be spelled "*"`
	}
	if m != "*" && strings.Trim(m, "*?") == "" && strings.Contains(m, "*") {
		return fmt.Sprintf(`matcher %q matches every tool; spell it "*"`, m)
	}
	return ""
}

// mcpMismatch compares a handshake MCP server to its approval.
func mcpMismatch(a MCPServerGrant, m yep.MCPServerDecl) string {
	typ := m.Type
	if typ == "" {
		typ = yep.MCPStdio
		if m.URL != "" {
			typ = yep.MCPHTTP
		}
	}
	at := a.Type
	if at == "" {
		at = yep.MCPStdio
	}
	if typ != at {
		return fmt.Sprintf("transport changed from approved %s to %s", at, typ)
	}
	switch typ {
	case yep.MCPStdio:
		if m.URL != "" {
			return "a stdio server cannot carry a URL"
		}
		if m.Command != a.Command || !slices.Equal(m.Args, a.Args) {
			return fmt.Sprintf("command %q %v differs from the approved %q %v", m.Command, m.Args, a.Command, a.Args)
		}
	case yep.MCPHTTP:
		if m.Command != "" {
			return "an http server cannot carry a command"
		}
		if !urlAllowed(a.URL, m.URL) {
			return fmt.Sprintf("URL %q differs from the approved %q", m.URL, a.URL)
		}
	default:
		return fmt.Sprintf("unknown transport %q", typ)
	}
	return ""
}

func urlAllowed(approved, got string) bool {
	if approved == got {
		return true
	}
	au, err1 := url.Parse(strings.Replace(approved, ":*", ":0", 1))
	gu, err2 := url.Parse(got)
	if err1 != nil || err2 != nil || !strings.Contains(approved, ":*") {
		return false
	}
	return au.Scheme == gu.Scheme && au.Hostname() == gu.Hostname() && au.Path == gu.Path && gu.Port() != "" && gu.User == nil
}
