// Package extload turns installed or in-place packages into the grants a
// host session runs: it reads a package's manifest (never executing
// anything) and completes the static grant from packaging/hostgrant with the
// extension's config and injected environment.
package extload

import (
	"encoding/json"
	"os"

	cfgpkg "yolop.dev/cmd/yolop/internal/config"
	"yolop.dev/core/host"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
)

// FromManifest builds the grant of a loaded manifest, with ${VAR} in the
// server's args and env expanded from the environment. config is the
// extension's validated, non-secret capability config (may be nil); env
// holds extra server environment (e.g. injected secrets), added over the
// manifest's own.
func FromManifest(m *packaging.Manifest, config json.RawMessage, env map[string]string) (host.Grant, error) {
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		return host.Grant{}, err
	}
	// ${VAR} in the server's args and env comes from the environment
	// (unset ones stay as written; the config resolver warns about them).
	// The extra env below is never expanded: it may hold secrets.
	cfgpkg.ExpandServer(m.Name, &g.Server, os.LookupEnv)
	g.Config = config
	if len(env) > 0 && g.Server.Env == nil {
		g.Server.Env = map[string]string{}
	}
	for k, v := range env {
		g.Server.Env[k] = v
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
