package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"yolop.dev/core/yep"
)

// FileName is the agent-neutral MCP config file a workspace carries at its
// root, in Claude Code's format.
const FileName = ".mcp.json"

// A ServerConfig is one MCP server to connect.
type ServerConfig struct {
	// Name is the server's session name: a .mcp.json key, or
	// "<ext>__<server>" for a contributed server. Tools are named
	// mcp__<Name>__<tool>.
	Name string
	// Type is yep.MCPStdio (Command, Args, Env) or yep.MCPHTTP (URL,
	// Headers).
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Dir is the working directory of a stdio server; PackageDir, if set,
	// is searched for the command first (a contributed server's package).
	Dir, PackageDir string
	// Source names where the server came from, for warnings and status:
	// the .mcp.json path, or "ext:<name>".
	Source string
}

// fileJSON is .mcp.json: mcpServers.<name>.{command,args,env} or
// {type:"http", url, headers}.
type fileJSON struct {
	MCPServers map[string]struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"mcpServers"`
}

// validName is what a server name may hold: it becomes part of tool names.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// LoadFile reads a .mcp.json. A missing file is no servers and no warning.
// ${VAR} and ${VAR:-default} in command, args, env, url and headers are
// expanded with lookup (nil means the host environment); an unset variable
// with no default is left as written and warned about. A file that cannot
// be parsed, and each server that cannot be used, is a warning naming the
// file and server: the session still starts.
func LoadFile(path string, lookup func(string) (string, bool)) ([]ServerConfig, []string) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: cannot be read: %v; its MCP servers are off", path, err)}
	}
	return loadBytes(path, b, lookup)
}

// loadBytes is [LoadFile] on the bytes read from path.
func loadBytes(path string, b []byte, lookup func(string) (string, bool)) ([]ServerConfig, []string) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var f fileJSON
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, []string{fmt.Sprintf("%s: not valid JSON (%v); its MCP servers are off", path, err)}
	}
	names := make([]string, 0, len(f.MCPServers))
	for n := range f.MCPServers {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []ServerConfig
	var warns []string
	for _, n := range names {
		s := f.MCPServers[n]
		warn := func(format string, a ...any) {
			warns = append(warns, fmt.Sprintf("%s: MCP server %q: %s", path, n, fmt.Sprintf(format, a...)))
		}
		if !validName.MatchString(n) {
			warn("a server name may hold only letters, digits, '_' and '-' (1-64 of them); skipped")
			continue
		}
		var unset []string
		ex := func(v string) string {
			r, miss := Expand(v, lookup)
			unset = append(unset, miss...)
			return r
		}
		c := ServerConfig{Name: n, Source: path, Dir: filepath.Dir(path)}
		typ := s.Type
		if typ == "" {
			typ = yep.MCPStdio
			if s.URL != "" && s.Command == "" {
				typ = yep.MCPHTTP
			}
		}
		switch typ {
		case yep.MCPStdio:
			if s.Command == "" {
				warn("a stdio server needs a command; skipped")
				continue
			}
			c.Type, c.Command = yep.MCPStdio, ex(s.Command)
			for _, a := range s.Args {
				c.Args = append(c.Args, ex(a))
			}
			c.Env = expandMap(s.Env, ex)
		case yep.MCPHTTP, "streamable-http", "streamableHttp":
			if s.URL == "" {
				warn("an http server needs a url; skipped")
				continue
			}
			c.Type, c.URL = yep.MCPHTTP, ex(s.URL)
			c.Headers = expandMap(s.Headers, ex)
		default:
			warn("transport %q is not supported (use stdio or http); skipped", typ)
			continue
		}
		for _, v := range slices.Compact(unset) {
			warn("${%s} is not set", v)
		}
		out = append(out, c)
	}
	return out, warns
}

func expandMap(m map[string]string, ex func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = ex(v)
	}
	return out
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// Expand replaces ${VAR} and ${VAR:-default} in s with lookup's values. It
// returns the names that were unset and had no default; those references
// are left as written.
func Expand(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var unset []string
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		if v, ok := lookup(m[1]); ok {
			return v
		}
		if m[2] != "" {
			return m[3]
		}
		unset = append(unset, m[1])
		return ref
	})
	return out, unset
}
