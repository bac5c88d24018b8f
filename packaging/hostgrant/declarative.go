package hostgrant

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/packaging"
)

// TransportDeclarative is the [core.ServerSpec].Transport of a package
// loaded through the declarative path (a Claude Code plugin): the host
// serves its commands and command hooks in-process (harness registers it).
const TransportDeclarative = "declarative"

// DeclarativeSpec decodes the approved declarative contribution a grant's
// server spec carries (its one argument).
func DeclarativeSpec(spec core.ServerSpec) (*packaging.Declarative, error) {
	if len(spec.Args) != 1 {
		return nil, fmt.Errorf("extension %s: a declarative server spec carries one argument, got %d", spec.Name, len(spec.Args))
	}
	raw, err := base64.StdEncoding.DecodeString(spec.Args[0])
	if err != nil {
		return nil, fmt.Errorf("extension %s: %w", spec.Name, err)
	}
	var d packaging.Declarative
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("extension %s: %w", spec.Name, err)
	}
	return &d, nil
}

// declarativeGrant is the grant of a package without a yolop facet: its
// commands, its command hooks as subscriptions (one per event and glob,
// with the longest timeout and block if any of them blocks), its MCP
// servers with ${CLAUDE_PLUGIN_ROOT} expanded, and its pinned skills. The
// approved contribution travels to the in-process server in the spec.
func declarativeGrant(m *packaging.Manifest) (host.Grant, error) {
	d := m.Declarative
	if len(d.Commands)+len(d.Hooks)+len(d.MCPServers)+len(m.SkillPins) == 0 {
		return host.Grant{}, fmt.Errorf("extension %s: manifest %s has no yolop facet and contributes nothing through the declarative path (no commands/, hooks/hooks.json, .mcp.json or skills/)", m.Name, m.File)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return host.Grant{}, err
	}
	g := host.Grant{
		Name: m.Name, Version: m.Version, ProtocolVersion: yep.ProtocolVersion,
		Server: core.ServerSpec{Name: m.Name, Transport: TransportDeclarative, PackageDir: m.Dir, Dir: m.Dir,
			Args: []string{base64.StdEncoding.EncodeToString(raw)}},
		UIAsk: DeclarativeAsks(d),
	}
	for _, c := range d.Commands {
		g.Commands = append(g.Commands, host.CommandGrant{Name: c.Name, Description: c.Description})
	}
	subs := map[[2]string]host.HookGrant{}
	var order [][2]string
	for _, h := range d.Hooks {
		k := [2]string{h.Event, h.Matcher}
		s, had := subs[k]
		if !had {
			order = append(order, k)
			s = host.HookGrant{Event: h.Event, Matcher: h.Matcher, OnError: yep.HookOnErrorWarn}
		}
		s.TimeoutMS = max(s.TimeoutMS, h.TimeoutMS)
		if h.OnError == yep.HookOnErrorBlock {
			s.OnError = yep.HookOnErrorBlock
		}
		subs[k] = s
	}
	for _, k := range order {
		g.Hooks = append(g.Hooks, subs[k])
	}
	for _, s := range d.MCPServers {
		x := func(v string) string { return packaging.ExpandPluginRoot(v, m.Dir) }
		mg := host.MCPServerGrant{Name: s.Name, Type: s.Type, Command: x(s.Command), URL: x(s.URL)}
		for _, a := range s.Args {
			mg.Args = append(mg.Args, x(a))
		}
		if s.Env != nil {
			mg.Env = map[string]string{}
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				mg.Env[k] = x(s.Env[k])
			}
		}
		mg.Headers = cloneMap(s.Headers)
		g.MCPServers = append(g.MCPServers, mg)
	}
	dirs, err := skillDirs(m.Dir)
	if err != nil {
		return host.Grant{}, fmt.Errorf("extension %s: %w", m.Name, err)
	}
	pinned := map[string]bool{}
	for _, p := range m.SkillPins {
		pinned[p.Name] = true
	}
	g.Skills = slices.DeleteFunc(dirs, func(d string) bool { return !pinned[filepath.Base(d)] })
	return g, nil
}

// DeclarativeAsks reports whether a declarative package's server may put
// questions to the user (ui/ask): it has PreToolUse command hooks, whose
// permissionDecision "ask" is asked that way.
func DeclarativeAsks(d *packaging.Declarative) bool {
	return slices.ContainsFunc(d.Hooks, func(h packaging.DeclHook) bool { return h.Event == yep.HookPreToolUse })
}
