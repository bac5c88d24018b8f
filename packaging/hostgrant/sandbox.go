package hostgrant

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"yolop.dev/core"
	"yolop.dev/packaging"
)

// CacheDir is the per-extension cache directory a sandbox's ${cache} names:
// <user cache dir>/yolop/ext/<name> (os.UserCacheDir: $XDG_CACHE_HOME or
// ~/.cache on Linux). It is not created.
func CacheDir(name string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "yolop", "ext", name), nil
}

// sandboxSpec resolves the effective sandbox of m's native server (its
// manifest's yolop.sandbox, or packaging.DefaultSandbox) into the
// confinement the transport applies: ${package} is the package directory,
// ${home} the user's home, ${cache} the extension's [CacheDir] (created,
// mode 0700), ${workspace} is left for each start. A path whose placeholder
// cannot be resolved, or that does not exist, is left out: the rules only
// ever narrow by it. Nil for a server that gets no OS sandbox (WASM, or
// none).
func sandboxSpec(m *packaging.Manifest) *core.Confinement {
	s, origin := m.EffectiveSandbox()
	if s == nil {
		return nil
	}
	c := &core.Confinement{Exec: s.Exec, Origin: origin}
	if s.Net != nil {
		c.Connect = ports(s.Net.Connect)
		c.Bind = ports(s.Net.Bind)
	}
	c.Paths = ResolveSandboxPaths(m, s.FS)
	if (m.Yolop.Provider != nil || hostsLoopbackMCP(m.Yolop.MCPServers)) && !slices.Contains(c.Bind, 0) {
		// The approved provider facet, or an http MCP server at
		// 127.0.0.1:*, is an endpoint the server hosts on loopback: it
		// may listen on a port the kernel picks (port 0).
		c.Bind = append([]uint16{0}, c.Bind...)
	}
	return c
}

// ResolveSandboxPaths resolves sandbox paths for m's server: ${package} is
// the package directory, ${home} the user's home, ${cache} the extension's
// [CacheDir] (created, mode 0700, when a path names it), ${workspace} is
// left for each start. A path whose placeholder cannot be resolved, or that
// does not exist, is left out.
func ResolveSandboxPaths(m *packaging.Manifest, fs []packaging.SandboxPath) []core.ConfinedPath {
	var out []core.ConfinedPath
	home, herr := os.UserHomeDir()
	cache, cerr := CacheDir(m.Name)
	if cerr == nil && slices.ContainsFunc(fs, func(p packaging.SandboxPath) bool { return strings.HasPrefix(p.Path, packaging.CacheVar) }) {
		cerr = os.MkdirAll(cache, 0o700)
	}
	for _, p := range fs {
		path := p.Path
		var root string
		var ok bool
		switch {
		case strings.HasPrefix(path, packaging.WorkspaceVar):
			rest := strings.TrimPrefix(path, packaging.WorkspaceVar)
			out = append(out, core.ConfinedPath{Path: core.WorkspaceVar + filepath.FromSlash(rest), Write: p.Write()})
			continue
		case strings.HasPrefix(path, packaging.PackageVar):
			root, ok, path = m.Dir, m.Dir != "", strings.TrimPrefix(path, packaging.PackageVar)
		case strings.HasPrefix(path, packaging.HomeVar):
			root, ok, path = home, herr == nil && home != "", strings.TrimPrefix(path, packaging.HomeVar)
		case strings.HasPrefix(path, packaging.CacheVar):
			root, ok, path = cache, cerr == nil, strings.TrimPrefix(path, packaging.CacheVar)
		default:
			root, ok = "", true
		}
		if !ok {
			continue
		}
		full := filepath.Clean(root + filepath.FromSlash(path))
		if _, err := os.Lstat(full); err != nil {
			continue
		}
		out = append(out, core.ConfinedPath{Path: full, Write: p.Write()})
	}
	return out
}

// hostsLoopbackMCP reports an http MCP server the capability server hosts
// on a loopback port it picks (http://127.0.0.1:*/… or localhost:*).
func hostsLoopbackMCP(servers []packaging.MCPServer) bool {
	for _, s := range servers {
		if s.Type == "http" && (strings.Contains(s.URL, "://127.0.0.1:*") || strings.Contains(s.URL, "://localhost:*")) {
			return true
		}
	}
	return false
}

// ports converts validated TCP ports, sorted and without duplicates.
func ports(ps []int) []uint16 {
	var out []uint16
	for _, p := range ps {
		if p >= 1 && p <= 65535 {
			out = append(out, uint16(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
