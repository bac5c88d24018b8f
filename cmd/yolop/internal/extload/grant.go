// Package extload turns installed or in-place packages into the grants a
// host session runs: it reads a package's manifest (never executing
// anything) and maps its yolop facet onto [host.Grant].
package extload

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/packaging"
)

// FromManifest maps a manifest's yolop facet onto a grant. config is the
// extension's validated, non-secret capability config (may be nil); env
// holds extra server environment (e.g. injected secrets).
func FromManifest(m *packaging.Manifest, config json.RawMessage, env map[string]string) (host.Grant, error) {
	if m.Yolop == nil {
		return host.Grant{}, fmt.Errorf("package %q (%s) has no yolop facet: it contributes no capability server", m.Name, m.Dir)
	}
	f := m.Yolop
	g := host.Grant{
		Name:            m.Name,
		Version:         m.Version,
		ProtocolVersion: f.ProtocolVersion,
		ConfigSchema:    f.ConfigSchema,
		Config:          config,
		Status:          f.Status,
		UIAsk:           f.UIAsk,
		Trace:           f.Trace,
	}
	if f.CapabilityServer != nil {
		spec := core.ServerSpec{
			Name:       m.Name,
			Command:    f.CapabilityServer.Command,
			Args:       append([]string(nil), f.CapabilityServer.Args...),
			PackageDir: m.Dir,
			Dir:        m.Dir,
			Env:        map[string]string{},
		}
		for k, v := range f.CapabilityServer.Env {
			spec.Env[k] = os.ExpandEnv(v)
		}
		for k, v := range env {
			spec.Env[k] = v
		}
		g.Server = spec
	}
	for _, t := range f.Tools {
		g.Tools = append(g.Tools, host.ToolGrant{
			Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
			NeverDefer: t.NeverDefer, Streaming: t.Streaming, Approval: t.Approval, Risk: t.Risk, Narration: t.Narration,
		})
	}
	for _, h := range f.Hooks {
		g.Hooks = append(g.Hooks, host.HookGrant{Event: h.Event, Matcher: h.Matcher, TimeoutMS: h.TimeoutMS, OnError: h.OnError})
	}
	for _, s := range f.MCPServers {
		g.MCPServers = append(g.MCPServers, host.MCPServerGrant{Name: s.Name, Type: s.Type, Command: s.Command, Args: s.Args, URL: s.URL})
	}
	if f.Prompt != nil {
		g.Prompt = &host.PromptGrant{Text: f.Prompt.Text, Dynamic: f.Prompt.Dynamic, MaxBytes: f.Prompt.MaxBytes}
	}
	for _, c := range f.Commands {
		g.Commands = append(g.Commands, host.CommandGrant{Name: c.Name, Description: c.Description})
	}
	if f.Skills {
		g.Skills = []string{filepath.Join(m.Dir, "skills")}
	}
	return g, nil
}

// FromDir loads the package in dir in place (the author's dev loop) and
// returns its grant.
func FromDir(dir string) (host.Grant, *packaging.Manifest, error) {
	m, err := packaging.Load(dir)
	if err != nil {
		return host.Grant{}, nil, err
	}
	g, err := FromManifest(m, nil, nil)
	return g, m, err
}
