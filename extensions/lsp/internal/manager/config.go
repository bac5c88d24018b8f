package manager

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A ServerConfig says how to run one language server. In the extension's
// config it is servers.<key>; fields left out keep the default for that
// key.
type ServerConfig struct {
	// Command is the executable, a bare name looked up on PATH or an
	// absolute path.
	Command string `json:"command,omitempty"`
	// Args are passed to Command.
	Args []string `json:"args,omitempty"`
	// Extensions are the file extensions the server handles, with the dot
	// (".go"). A file goes to the first server, by key order, that lists
	// its extension.
	Extensions []string `json:"extensions,omitempty"`
	// Env adds variables to the server's environment.
	Env map[string]string `json:"env,omitempty"`
	// InitializationOptions is sent in initialize.
	InitializationOptions json.RawMessage `json:"initialization_options,omitempty"`
	// Settings answers the server's workspace/configuration requests,
	// looked up by section.
	Settings json.RawMessage `json:"settings,omitempty"`
	// Install is the install guidance shown when Command is missing.
	Install string `json:"install,omitempty"`
	// Disabled turns the server off.
	Disabled bool `json:"disabled,omitempty"`
	// SettleMS is how long a fresh server that reports no load progress
	// must stay quiet before its first answer is trusted. Zero means 750.
	SettleMS int `json:"settle_ms,omitempty"`
}

// Settle returns the settle time of a fresh server.
func (sc ServerConfig) Settle() time.Duration { return msOr(sc.SettleMS, 750) }

// Config is the extension's configuration.
type Config struct {
	// Servers maps a key (a language name) to its server. The defaults of
	// [DefaultServers] are merged under the configured entries.
	Servers map[string]ServerConfig `json:"servers,omitempty"`
	// RequestTimeoutMS bounds one request to a language server. Zero means
	// 30000.
	RequestTimeoutMS int `json:"request_timeout_ms,omitempty"`
	// StartupTimeoutMS bounds starting a server and its initialize
	// handshake. Zero means 60000.
	StartupTimeoutMS int `json:"startup_timeout_ms,omitempty"`
	// DiagnosticsWaitMS is how long lsp_diagnostics waits for fresh results
	// after a change. Zero means 3000.
	DiagnosticsWaitMS int `json:"diagnostics_wait_ms,omitempty"`
	// MaxResults caps the lines of a references, symbols or diagnostics
	// answer. Zero means 100.
	MaxResults int `json:"max_results,omitempty"`
}

// DefaultServers returns the built-in servers: gopls, rust-analyzer,
// pyright and typescript-language-server.
func DefaultServers() map[string]ServerConfig {
	return map[string]ServerConfig{
		"go": {
			Command:    "gopls",
			Extensions: []string{".go"},
			Install:    "go install golang.org/x/tools/gopls@latest",
			// Workspace symbol search covers the workspace's packages, not
			// the standard library and dependencies; packages that depend
			// on a changed one are re-checked at once, not after gopls's
			// default 1s pause for a typist (an agent's edits arrive whole).
			InitializationOptions: json.RawMessage(`{"symbolScope":"workspace","diagnosticsDelay":"50ms"}`),
		},
		"rust": {
			Command:    "rust-analyzer",
			Extensions: []string{".rs"},
			Install:    "rustup component add rust-analyzer",
		},
		"python": {
			Command:    "pyright-langserver",
			Args:       []string{"--stdio"},
			Extensions: []string{".py", ".pyi"},
			Install:    "npm install -g pyright",
		},
		"typescript": {
			Command:    "typescript-language-server",
			Args:       []string{"--stdio"},
			Extensions: []string{".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"},
			// tsserver starts loading the project (reported as progress)
			// only after the first file opens, up to seconds later.
			SettleMS: 5000,
			// Semantic answers only: while the project loads, tsserver's
			// syntax server would answer a definition with the import
			// that names the symbol (the file's own binding), which an
			// agent takes as the answer.
			InitializationOptions: json.RawMessage(`{"tsserver":{"useSyntaxServer":"never"}}`),
			// TypeScript 7 ships no tsserver, which the server drives.
			Install: "npm install -g typescript-language-server typescript@6",
		},
	}
}

// ParseConfig decodes the extension's config (nil or empty means all
// defaults) and merges it over the defaults.
func ParseConfig(raw json.RawMessage) (Config, error) {
	var c Config
	if s := strings.TrimSpace(string(raw)); s != "" && s != "null" {
		if err := json.Unmarshal(raw, &c); err != nil {
			return Config{}, fmt.Errorf("lsp config: %w; check the servers map and timeouts against the extension's config schema", err)
		}
	}
	merged := DefaultServers()
	for key, sc := range c.Servers {
		d := merged[key]
		if sc.Command != "" {
			// Another program does not inherit the default's args and
			// install hint; the same program at another path does.
			if filepath.Base(sc.Command) != filepath.Base(d.Command) {
				d.Args = nil
				d.Install = ""
			}
			d.Command = sc.Command
		}
		if sc.Args != nil {
			d.Args = sc.Args
		}
		if sc.Extensions != nil {
			d.Extensions = sc.Extensions
		}
		if sc.Env != nil {
			d.Env = sc.Env
		}
		if sc.InitializationOptions != nil {
			d.InitializationOptions = sc.InitializationOptions
		}
		if sc.Settings != nil {
			d.Settings = sc.Settings
		}
		if sc.Install != "" {
			d.Install = sc.Install
		}
		d.Disabled = sc.Disabled
		if sc.SettleMS != 0 {
			d.SettleMS = sc.SettleMS
		}
		if d.Command == "" && !d.Disabled {
			return Config{}, fmt.Errorf("lsp config: servers.%s has no command; set servers.%s.command to the language server's executable", key, key)
		}
		for i, e := range d.Extensions {
			if !strings.HasPrefix(e, ".") {
				d.Extensions[i] = "." + e
			}
		}
		merged[key] = d
	}
	c.Servers = merged
	if c.RequestTimeoutMS < 0 || c.StartupTimeoutMS < 0 || c.DiagnosticsWaitMS < 0 || c.MaxResults < 0 {
		return Config{}, fmt.Errorf("lsp config: timeouts and max_results must not be negative")
	}
	return c, nil
}

// RequestTimeout returns the per-request timeout.
func (c Config) RequestTimeout() time.Duration { return msOr(c.RequestTimeoutMS, 30000) }

// StartupTimeout returns the server startup timeout.
func (c Config) StartupTimeout() time.Duration { return msOr(c.StartupTimeoutMS, 60000) }

// DiagnosticsWait returns how long to wait for fresh diagnostics.
func (c Config) DiagnosticsWait() time.Duration { return msOr(c.DiagnosticsWaitMS, 3000) }

// Limit returns the result cap.
func (c Config) Limit() int {
	if c.MaxResults > 0 {
		return c.MaxResults
	}
	return 100
}

func msOr(ms, def int) time.Duration {
	if ms <= 0 {
		ms = def
	}
	return time.Duration(ms) * time.Millisecond
}

// keys returns the server keys in a stable order.
func (c Config) keys() []string {
	return slices.Sorted(maps.Keys(c.Servers))
}

// serversEqual reports whether two configs run the same servers.
func serversEqual(a, b Config) bool {
	ja, _ := json.Marshal(a.Servers)
	jb, _ := json.Marshal(b.Servers)
	return string(ja) == string(jb)
}
