package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"yolop.dev/core/host"
)

// extraCommands lists the subcommands beyond session and demo: ext and
// registry.
func (a *app) extraCommands() []*cobra.Command {
	return []*cobra.Command{a.extCmd(), a.registryCmd()}
}

// builtins returns the always-on built-in capabilities of a session.
func (a *app) builtins() []host.Capability { return nil }

// enabledGrants returns the grants of every extension enabled in
// settings.toml, with warnings for those that cannot load.
func (a *app) enabledGrants(ctx context.Context) ([]host.Grant, []string) { return nil, nil }

// enableExtension persists an installed extension as enabled and returns
// its grant, for /enable in a live session.
func (a *app) enableExtension(ctx context.Context, name string, ask host.AskSink) (host.Grant, error) {
	return host.Grant{}, fmt.Errorf("no extension %q is installed; install it with `yolop ext install`", name)
}

// disableExtension persists an extension as disabled.
func (a *app) disableExtension(ctx context.Context, name string) error {
	return fmt.Errorf("no extension %q is enabled", name)
}
