package host

import (
	"encoding/json"

	"yolop.dev/core"
)

// A Grant is what the user approved for one extension: the manifest's yolop
// facet, frozen for the session. The handshake may only narrow it. The
// packaging module builds a Grant from an installed package's manifest.
type Grant struct {
	// Name is the extension name (capability ref "ext:<name>").
	Name    string
	Version string
	// ProtocolVersion is the manifest's protocol_version, "MAJOR.MINOR".
	ProtocolVersion string
	// Server says how to start the capability server.
	Server core.ServerSpec
	Tools  []ToolGrant
	Hooks  []HookGrant
	// MCPServers are the approved MCP servers, by name and transport.
	MCPServers []MCPServerGrant
	// Prompt is nil when the extension contributes no prompt text.
	Prompt   *PromptGrant
	Commands []CommandGrant
	// Provider is nil unless the extension offers a model provider: an
	// OpenAI-compatible endpoint its server hosts on loopback.
	Provider *ProviderGrant
	// Skills lists SKILL.md directories the package ships (host-side only).
	Skills []string
	// Status, UIAsk and Trace are the reverse-direction opt-ins.
	Status, UIAsk, Trace bool
	// ConfigSchema is the extension's config_schema, verbatim.
	ConfigSchema json.RawMessage
	// Config is the validated, non-secret capability config sent in
	// initialize and config/changed.
	Config json.RawMessage
	// Verify, if set, runs immediately before every spawn of the server:
	// the first start, a reload and every crash respawn. It re-checks the
	// approval (the installed files against their pinned digests, a path
	// source's live manifest against the approved one). An error keeps the
	// server from starting; the extension is degraded with the error as
	// its reason until a reload passes the check.
	Verify func() error
}

// A ToolGrant is one approved tool definition. Definitions live in the
// manifest; the handshake only names the tools served.
type ToolGrant struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	NeverDefer  bool
	Streaming   bool
	Approval    string
	Risk        string
	Narration   string
	// TimeoutMS is the manifest's timeout_ms: an upper bound on one call
	// of the tool, in milliseconds; 0 means none declared.
	TimeoutMS int
}

// A HookGrant is one approved hook subscription.
type HookGrant struct {
	Event     string
	Matcher   string
	TimeoutMS int
	// OnError is yep.HookOnErrorWarn or yep.HookOnErrorBlock; empty means
	// warn.
	OnError string
}

// An MCPServerGrant is one approved MCP server. For "http", a URL whose port
// is "*" (http://127.0.0.1:*/mcp) admits any port on that host and path, for
// servers the extension hosts on a port it picks at start.
type MCPServerGrant struct {
	Name    string
	Type    string // yep.MCPStdio or yep.MCPHTTP
	Command string
	Args    []string
	URL     string
	// Env and Headers are the manifest's, for the MCP client to start the
	// server with (under what the handshake adds); they are not clamped.
	Env, Headers map[string]string
}

// A PromptGrant is the approved prompt contribution.
type PromptGrant struct {
	// Text is the static text from the manifest.
	Text string
	// Dynamic allows prompt/contribution once per turn.
	Dynamic bool
	// MaxBytes bounds any contribution; 0 means len(Text), or 8 KiB for a
	// dynamic prompt with no static text.
	MaxBytes int
}

// A CommandGrant is one approved slash command.
type CommandGrant struct {
	Name        string
	Description string
}

// A ProviderGrant is the approved providers facet: the models an
// extension may offer the agent, each with the context window the user
// approved. The handshake names the endpoint and may only narrow the
// models.
type ProviderGrant struct {
	// Name names the provider, for people and routing.
	Name   string
	Models []ProviderModel
}

// A ProviderModel is one approved model of a provider.
type ProviderModel struct {
	ID string
	// ContextWindow is the model's context window in tokens, as approved.
	ContextWindow int
}

// eager reports whether the extension must be running before the first
// turn: it contributes a prompt, hooks, traces, MCP servers or a model
// provider (which its handshake announces).
func (g *Grant) eager() bool {
	return g.Prompt != nil || len(g.Hooks) > 0 || g.Trace || len(g.MCPServers) > 0 || g.Provider != nil
}

func (p *PromptGrant) maxBytes() int {
	switch {
	case p.MaxBytes > 0:
		return p.MaxBytes
	case len(p.Text) > 0:
		return len(p.Text)
	}
	return 8 << 10
}
