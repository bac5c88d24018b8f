package config

import (
	"bytes"
	"context"
	"maps"

	"yolop.dev/core/host"
	"yolop.dev/packaging"
)

// Push applies an extension's current config — settings.toml plus the
// credential store — to its live adapter: it is resolved and validated
// first (an invalid or incomplete config is refused and the running server
// keeps its config), then sent as config/changed, or, when the server's
// environment changed (a secret or an `env` field), the server is
// restarted with the new environment. A server answering restart-required
// is restarted. It reports whether a restart happened; nothing happens
// when nothing changed.
func (r *Resolver) Push(ctx context.Context, e *host.Extension, m *packaging.Manifest) (restarted bool, err error) {
	g, _, err := r.Grant(ctx, m)
	if err != nil {
		r.logger().Warn("config change not applied; the extension keeps its current config", "extension", m.Name, "error", err)
		return false, err
	}
	cur := e.Grant()
	if bytes.Equal(cur.Config, g.Config) && maps.Equal(cur.Server.Env, g.Server.Env) {
		return false, nil
	}
	return e.Reconfigure(ctx, g.Config, g.Server.Env)
}

// PushSession is [Resolver.Push] for the extension of that name in a
// session; an extension not in the session has nothing to update (it
// resolves its config when it starts).
func (r *Resolver) PushSession(ctx context.Context, s *host.Session, m *packaging.Manifest) (restarted bool, err error) {
	e, ok := s.Extension(m.Name)
	if !ok {
		return false, nil
	}
	return r.Push(ctx, e, m)
}
