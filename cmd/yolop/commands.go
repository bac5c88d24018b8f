package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"yolop.dev/cmd/yolop/internal/builtin"
	"yolop.dev/cmd/yolop/internal/builtin/extmgr"
	"yolop.dev/core/host"
	"yolop.dev/packaging"
)

// extraCommands lists the subcommands beyond session and demo: ext and
// registry.
func (a *app) extraCommands() []*cobra.Command {
	return []*cobra.Command{a.extCmd(), a.registryCmd()}
}

// allowFileGitEnv, set to 1, lets `yolop ext install` fetch file:// git
// URLs. It exists for tests (real repositories in a temp dir); users
// install a local directory as a path source instead.
const allowFileGitEnv = "YOLOP_ALLOW_FILE_GIT"

// manager returns the extension manager over the config directory: the
// one code path behind the ext verbs, the session's enabled extensions and
// the built-in extensions capability.
func (a *app) manager() (*extmgr.Manager, error) {
	r, err := a.configResolver()
	if err != nil {
		return nil, err
	}
	return extmgr.Default(extmgr.Options{
		AllowFileGit: os.Getenv(allowFileGitEnv) == "1",
		FetchCrate: func(src packaging.Source, registry string, build bool) (extmgr.FetchFunc, extmgr.ProvisionFunc) {
			return a.fetchCrate(src, crateInstall{Registry: registry, Build: build})
		},
		Resolve:     r.GrantParts,
		FieldStatus: r.FieldStatus,
		Setup:       a.setupOnEnable(r),
		ForgetSecrets: func(ctx context.Context, name string) error {
			return r.Secrets.DeleteExtension(ctx, name)
		},
	})
}

// A builtinOption wires a built-in capability to the running session.
type builtinOption func(*builtin.ExtensionsOptions)

// withAsk gives the extensions capability the session's ask sink, so an
// agent-driven install can ask the user for consent.
func withAsk(s host.AskSink) builtinOption {
	return func(o *builtin.ExtensionsOptions) { o.Ask = s }
}

// withSession makes enable/disable through the extensions capability live
// in the running session.
func withSession(activate func(host.Grant), deactivate func(string) bool) builtinOption {
	return func(o *builtin.ExtensionsOptions) { o.Activate, o.Deactivate = activate, deactivate }
}

// builtins returns the always-on built-in capabilities of a session: the
// extensions capability. Without withAsk it refuses installs (it has no
// way to ask for consent).
func (a *app) builtins(opts ...builtinOption) []host.Capability {
	m, err := a.manager()
	if err != nil {
		a.log.Warn("the built-in extensions capability is unavailable", "error", err)
		return nil
	}
	var o builtin.ExtensionsOptions
	for _, f := range opts {
		f(&o)
	}
	caps := []host.Capability{builtin.NewExtensions(m, o)}
	if st := a.secretTool(o.Ask); st != nil {
		caps = append(caps, st)
	}
	return caps
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

// toolTimeout returns [session] tool_timeout from settings.toml, or 0
// when it is not set.
func (a *app) toolTimeout(ctx context.Context) (time.Duration, error) {
	m, err := a.manager()
	if err != nil {
		return 0, err
	}
	return m.Settings().ToolTimeout(ctx)
}

// enableExtension persists an installed extension as enabled and returns
// its grant, for /enable in a live session. An extension whose files
// changed since approval is refused.
func (a *app) enableExtension(ctx context.Context, name string, ask host.AskSink) (host.Grant, error) {
	m, err := a.manager()
	if err != nil {
		return host.Grant{}, err
	}
	return m.EnableWith(ctx, name, ask)
}

// disableExtension persists an extension as disabled.
func (a *app) disableExtension(ctx context.Context, name string) error {
	m, err := a.manager()
	if err != nil {
		return err
	}
	_, err = m.Disable(ctx, name)
	return err
}
