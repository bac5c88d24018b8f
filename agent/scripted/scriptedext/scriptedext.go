// Package scriptedext serves the scripted model (yolop.dev/agent/scripted)
// as a yolop extension: a model provider over the providers facet. When the
// host initializes it, the server starts a scripted OpenAI-compatible
// endpoint on 127.0.0.1 with a free port and announces it, with the
// script's model, in capability_params.provider; the agent then asks it
// with a model reference "ext:<extension>/<model>", as it would ask any
// model. The endpoint stops when the connection ends.
//
// The script is the config's "script" (the path of a script JSON file,
// relative to the package directory, which is the server's working
// directory), else the one [Options.Script] embeds; with neither,
// initialize fails saying so. The script's "model" is the model announced,
// so it must be one the manifest's providers facet lists, or the host
// refuses it.
//
// The server also contributes a slash command, "verify" (/<extension>:verify),
// which succeeds when every step of the script has answered a request and
// otherwise fails naming the first step that has not ([scripted.Server.Verify]),
// so a front-end or a test can check that a session went as the script
// tells.
package scriptedext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/agent/scripted"
	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// Name is the extension's name in the package this module ships
// (agent/scripted/package) and in the demo's.
const Name = "scripted"

// VerifyCommand is the slash command that reports whether the script
// played to its end.
const VerifyCommand = "verify"

// Options configure [New].
type Options struct {
	// Name is the extension's name, as its manifest says; empty: [Name].
	Name string
	// Script is the script JSON served when the config names none; nil:
	// the config must name one.
	Script []byte
	// Addr is where the endpoint listens; empty: "127.0.0.1:0", a free
	// loopback port.
	Addr string
	// Logger receives the server's logs; nil: stderr.
	Logger hclog.Logger
}

// Config is the extension's config (its manifest's config_schema).
type Config struct {
	// Script is the path of a script JSON file; relative, it is resolved
	// against the server's working directory, the package directory.
	Script string `json:"script,omitempty"`
}

// New returns the scripted model's capability server, ready to serve.
func New(o Options) *sdk.Server {
	if o.Name == "" {
		o.Name = Name
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	srv := sdk.NewServer(sdk.Info{Name: o.Name, Version: "0.1.0"}, sdk.Options{Logger: o.Logger})
	m := &model{opts: o}
	srv.OnConfig(m.configure)
	srv.Provider(m.start)
	srv.Command(VerifyCommand, "Say whether the model's script played to its end", m.verify)
	return srv
}

// model is the extension's state: the script, then its server.
type model struct {
	opts   Options
	script *scripted.Script

	mu  sync.Mutex
	srv *scripted.Server
}

func (m *model) configure(raw json.RawMessage) error {
	var cfg Config
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	switch {
	case cfg.Script != "":
		path, err := filepath.Abs(cfg.Script)
		if err != nil {
			return fmt.Errorf("config script %q: %w", cfg.Script, err)
		}
		s, err := scripted.Load(path)
		if err != nil {
			return fmt.Errorf("config script: %w", err)
		}
		m.script = s
	case m.opts.Script != nil:
		s, err := scripted.Parse(m.opts.Script)
		if err != nil {
			return fmt.Errorf("the embedded script: %w", err)
		}
		m.script = s
	default:
		return errors.New(`no script: set the config's "script" to the path of a script JSON file`)
	}
	return nil
}

// start serves the script for as long as the connection lasts and
// announces it.
func (m *model) start(ctx context.Context) (yep.ProviderParams, error) {
	srv, err := scripted.Serve(ctx, m.script, m.opts.Addr)
	if err != nil {
		return yep.ProviderParams{}, err
	}
	m.mu.Lock()
	m.srv = srv
	m.mu.Unlock()
	return yep.ProviderParams{BaseURL: srv.URL() + "/v1", Models: []string{ModelOf(m.script)}}, nil
}

func (m *model) verify(ctx context.Context, args string) (yep.CommandExecuteResult, error) {
	m.mu.Lock()
	srv := m.srv
	m.mu.Unlock()
	if srv == nil {
		return yep.CommandExecuteResult{}, errors.New("the scripted model is not serving")
	}
	if err := srv.Verify(); err != nil {
		return yep.CommandExecuteResult{}, err
	}
	n := len(m.script.Steps)
	return yep.CommandExecuteResult{Success: true, Message: fmt.Sprintf("the script played to its end: %d of %d steps answered", n, n)}, nil
}

// ModelOf is the model the extension announces for script: its "model",
// "scripted" when it names none.
func ModelOf(s *scripted.Script) string {
	if s.Model == "" {
		return "scripted"
	}
	return s.Model
}
