package host

import (
	"context"
	"encoding/json"
	"maps"
	"time"

	"yolop.dev/core/yep"
)

// SetWorkspace repoints the workspace root: later handshakes carry it, and
// a running server gets workspace/changed.
func (e *Extension) SetWorkspace(root string) {
	e.mu.Lock()
	e.workspace = root
	p := e.proc
	e.mu.Unlock()
	if p != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = p.conn.Notify(ctx, yep.MethodWorkspaceChanged, yep.WorkspaceChangedParams{WorkspaceRoot: root})
	}
}

// UpdateConfig pushes a new validated config. A running server answering
// restart-required is restarted within the same grant. It reports whether
// a restart happened.
func (e *Extension) UpdateConfig(ctx context.Context, cfg json.RawMessage) (restarted bool, err error) {
	e.mu.Lock()
	e.grant.Config = cfg
	p := e.proc
	e.mu.Unlock()
	if p == nil {
		return false, nil
	}
	if !p.contrib.config {
		e.Stop()
		return true, e.Start(ctx)
	}
	var res yep.ConfigChangedResult
	if err := p.conn.Call(ctx, yep.MethodConfigChanged, yep.ConfigChangedParams{Config: cfg}, &res); err != nil {
		return false, e.callError("config/changed", err)
	}
	if res.Status == yep.ConfigRestartRequired {
		e.log.Info("config change requires a restart; restarting")
		e.Stop()
		return true, e.Start(ctx)
	}
	return false, nil
}

// Reconfigure replaces the config and the server environment together,
// for a change that reaches the environment (a secret, or a field with
// `env`). When the environment is unchanged it is [Extension.UpdateConfig].
// Otherwise a running server is restarted so it starts with the new
// environment (the approved surface never changes); an idle one gets it at
// its next start. It reports whether a restart happened.
func (e *Extension) Reconfigure(ctx context.Context, cfg json.RawMessage, env map[string]string) (restarted bool, err error) {
	e.mu.Lock()
	if maps.Equal(env, e.grant.Server.Env) {
		e.mu.Unlock()
		return e.UpdateConfig(ctx, cfg)
	}
	e.grant.Config = cfg
	e.grant.Server.Env = maps.Clone(env)
	p := e.proc
	e.mu.Unlock()
	if p == nil {
		return false, nil
	}
	e.log.Info("server environment changed; restarting")
	e.Stop()
	return true, e.Start(ctx)
}
