package main

import (
	"context"

	"github.com/spf13/cobra"

	"yolop.dev/core/host"
	"yolop.dev/harness/manager"
)

// extraCommands lists the subcommands beyond session and demo: ext and
// registry.
func (a *app) extraCommands() []*cobra.Command {
	return []*cobra.Command{a.extCmd(), a.registryCmd(), a.benchCmd(), a.serveLabCmd()}
}

// allowFileGitEnv, set to 1, lets `yolop ext install` fetch file:// git
// URLs. It exists for tests (real repositories in a temp dir); users
// install a local directory as a path source instead.
const allowFileGitEnv = "YOLOP_ALLOW_FILE_GIT"

// manager returns the extension manager over the config directory: the
// one code path behind the ext verbs, the session's enabled extensions and
// the built-in extensions capability.
func (a *app) manager() (*manager.Manager, error) {
	h, err := a.harness()
	if err != nil {
		return nil, err
	}
	return h.Manager(), nil
}

// enabledGrants returns the grants of every extension enabled in
// settings.toml, with warnings for those that cannot load (not installed,
// tampered, malformed, bad config); none of those is fatal.
func (a *app) enabledGrants(ctx context.Context) ([]host.Grant, []string) {
	m, err := a.manager()
	if err != nil {
		return nil, []string{"no extensions loaded: " + err.Error()}
	}
	return m.Grants(ctx)
}
