// Package hostgrant turns an approved package manifest into the [host.Grant]
// the runtime clamps a capability server against.
//
// It lives apart from package packaging so that the registries, which need
// only the manifest and the store, do not import the host runtime.
package hostgrant

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/packaging"
)

// serverSpec is how the runtime starts m's server: the command, or the
// WASM module with its sandbox (mounts with ${package} resolved, ${workspace}
// left for each start).
func serverSpec(m *packaging.Manifest) core.ServerSpec {
	cs := m.Yolop.CapabilityServer
	spec := core.ServerSpec{
		Name:        m.Name,
		Command:     cs.Command,
		Args:        slices.Clone(cs.Args),
		Env:         cloneMap(cs.Env),
		PackageDir:  m.Dir,
		MaxMemoryMB: cs.MaxMemoryMB,
	}
	if cs.Transport != "" && cs.Transport != core.TransportStdio {
		spec.Transport = cs.Transport
	}
	if cs.Module != "" {
		spec.Module = filepath.Join(m.Dir, filepath.FromSlash(cs.Module))
	}
	for _, mt := range cs.FS {
		p := mt.Path
		if rest, ok := strings.CutPrefix(p, packaging.PackageVar); ok {
			p = filepath.Join(m.Dir, filepath.FromSlash(rest))
		} else if rest, ok := strings.CutPrefix(p, packaging.WorkspaceVar); ok {
			p = core.WorkspaceVar + filepath.FromSlash(rest)
		}
		spec.Mounts = append(spec.Mounts, core.Mount{Path: p, ReadOnly: mt.ReadOnly()})
	}
	spec.Sandbox = sandboxSpec(m)
	return spec
}

// FromManifest builds the static part of a Grant from a loaded (and, for an
// installed package, verified) manifest: identity, server spec with the
// package directory, tools, hooks, MCP servers, prompt, commands, model
// provider, skill directories, opt-ins and config schema. Config is left
// nil: the caller fills it with the validated, non-secret capability
// config, and adds the env of `env`/`secret` config fields to Server.Env.
//
// A manifest without a yolop facet, or without a capability server, has
// nothing to run and is an error naming the extension.
func FromManifest(m *packaging.Manifest) (host.Grant, error) {
	f := m.Yolop
	if f == nil && m.Declarative != nil {
		return declarativeGrant(m)
	}
	if f == nil {
		return host.Grant{}, fmt.Errorf("extension %s: manifest %s has no yolop facet; it contributes no capability server", m.Name, m.File)
	}
	if f.CapabilityServer == nil {
		return host.Grant{}, fmt.Errorf("extension %s: manifest %s declares no capabilityServer", m.Name, m.File)
	}
	g := host.Grant{
		Name:            m.Name,
		Version:         m.Version,
		ProtocolVersion: f.ProtocolVersion,
		Server:          serverSpec(m),
		Status:          f.Status,
		UIAsk:           f.UIAsk,
		Trace:           f.Trace,
		ConfigSchema:    slices.Clone(f.ConfigSchema),
	}
	for _, t := range f.Tools {
		g.Tools = append(g.Tools, host.ToolGrant{
			Name: t.Name, Description: t.Description, InputSchema: slices.Clone(t.InputSchema),
			NeverDefer: t.NeverDefer, Streaming: t.Streaming, Approval: t.Approval, Risk: t.Risk, Narration: t.Narration,
			TimeoutMS: t.TimeoutMS,
		})
	}
	for _, h := range f.Hooks {
		g.Hooks = append(g.Hooks, host.HookGrant{Event: h.Event, Matcher: h.Matcher, TimeoutMS: h.TimeoutMS, OnError: h.OnError})
	}
	for _, s := range f.MCPServers {
		g.MCPServers = append(g.MCPServers, host.MCPServerGrant{Name: s.Name, Type: s.Type, Command: s.Command, Args: slices.Clone(s.Args), URL: s.URL,
			Env: cloneMap(s.Env), Headers: cloneMap(s.Headers)})
	}
	if p := f.Prompt; p != nil {
		g.Prompt = &host.PromptGrant{Text: p.Text, Dynamic: p.Dynamic, MaxBytes: p.MaxBytes}
	}
	for _, c := range f.Commands {
		g.Commands = append(g.Commands, host.CommandGrant{Name: c.Name, Description: c.Description})
	}
	if p := f.Provider; p != nil {
		g.Provider = &host.ProviderGrant{Name: p.Name}
		for _, pm := range p.Models {
			g.Provider.Models = append(g.Provider.Models, host.ProviderModel{ID: pm.ID, ContextWindow: pm.ContextWindow})
		}
	}
	if f.Skills {
		dirs, err := skillDirs(m.Dir)
		if err != nil {
			return host.Grant{}, fmt.Errorf("extension %s: %w", m.Name, err)
		}
		if m.SkillPins != nil {
			// Only what the approval pinned: a skill added since is not
			// the agent's to read until it is approved.
			pinned := map[string]bool{}
			for _, p := range m.SkillPins {
				pinned[p.Name] = true
			}
			dirs = slices.DeleteFunc(dirs, func(d string) bool { return !pinned[filepath.Base(d)] })
		}
		g.Skills = dirs
	}
	return g, nil
}

// skillDirs lists <dir>/skills/*/ that hold a SKILL.md, sorted.
func skillDirs(dir string) ([]string, error) {
	root := filepath.Join(dir, "skills")
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading skills directory %s: %w", root, err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(root, e.Name())
		if fi, err := os.Stat(filepath.Join(p, "SKILL.md")); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out, nil
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// varRef matches ${NAME} and ${NAME:-default}.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// ExpandServer expands ${VAR} (and ${VAR:-default}) in spec's Args and Env
// values from lookup, as .mcp.json does. A variable that is unset and has
// no default is left as written, with a warning naming the extension and
// where it appears. Run it before config env is added: values from the
// credential store are never expanded.
func ExpandServer(ext string, spec *core.ServerSpec, lookup func(string) (string, bool)) []string {
	var warnings []string
	expand := func(where, s string) string {
		return varRef.ReplaceAllStringFunc(s, func(ref string) string {
			sm := varRef.FindStringSubmatch(ref)
			if v, ok := lookup(sm[1]); ok {
				return v
			}
			if strings.Contains(ref, ":-") {
				return sm[2]
			}
			warnings = append(warnings, fmt.Sprintf("extension %s: ${%s} in %s is not set in the environment; left as written", ext, sm[1], where))
			return ref
		})
	}
	for i, a := range spec.Args {
		spec.Args[i] = expand(fmt.Sprintf("capabilityServer.args[%d]", i), a)
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		spec.Env[k] = expand("capabilityServer.env."+k, spec.Env[k])
	}
	return warnings
}
