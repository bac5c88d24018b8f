// Package manager is the one implementation of extension management that
// every front-end calls — the `yolop ext` CLI, the built-in `extensions`
// capability, a custom host: install and update with consent, list,
// enable, disable and remove, and the grants a session starts from.
//
// It joins the package store and extensions.lock ([packaging.Store]),
// settings.toml ([settings.File]) for which extensions are enabled, the
// config resolver ([config.Resolver]: config, secrets and the one way from
// an approved manifest to a [host.Grant]), and a [fetch.Fetcher] per
// source kind. An install reads top to bottom: source string → fetcher →
// staged package → consent → store commit → lock. Reading a manifest never
// executes anything; nothing is installed until a [Consent] accepts the
// contribution summary or diff.
package manager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"yolop.dev/core/host"
	"yolop.dev/harness/config"
	"yolop.dev/harness/fetch"
	"yolop.dev/harness/firstseen"
	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
	"yolop.dev/transport/stdio"
)

// Options configure a [Manager]. Store and Settings are required.
type Options struct {
	Store    *packaging.Store
	Settings *settings.File
	// Resolver resolves config and secrets and builds every grant. Nil
	// means a resolver over Settings and the credential store in the
	// store's directory.
	Resolver *config.Resolver
	// AllowFileGit accepts file:// git URLs. Tests only; zero refuses them.
	AllowFileGit bool
	// Fetchers stage packages by source kind. A missing git fetcher means
	// [fetch.Git] (with AllowFileGit); a missing crate fetcher refuses
	// crate sources with a clear error. Path sources need none.
	Fetchers map[packaging.SourceKind]fetch.Fetcher
	// SecretsChanged, if set, is called after the manager stored or
	// deleted secrets (setup on enable, remove), e.g. to reload a
	// scrubber.
	SecretsChanged func(ctx context.Context)
	// Marketplaces, if set, resolves <plugin>@<marketplace> sources; their
	// fetcher is Fetchers[packaging.SourceMarketplace].
	Marketplaces MarketplaceSources
	// HostVersion is the running yolop's version, checked against each
	// manifest's engines.yolop at install, enable and session start. Empty
	// skips the check.
	HostVersion string
	// FirstSeen records when each crate version and git commit was first
	// seen, for the update cooldown (cooldown.go). Nil means no record and
	// no cooldown.
	FirstSeen *firstseen.Store
	// Now is the cooldown's clock; nil means time.Now.
	Now func() time.Time
	// Advisories, if set, reads a registry's advisories for a crate: an
	// installed crate version a critical one affects is not started
	// (Grants), listed as blocked (List), and not installed or updated
	// to; see advisor.go.
	Advisories AdvisorySource
}

// A Manager manages installed extensions. It holds no state of its own
// beyond its options; every call reads the store and settings afresh, so a
// Manager is safe for concurrent use.
type Manager struct {
	o Options
}

// New returns a Manager over o.
func New(o Options) *Manager {
	if o.Resolver == nil {
		o.Resolver = &config.Resolver{Settings: o.Settings, Secrets: secrets.NewFile(o.Store.Dir()), SettingsPath: o.Settings.Path()}
	}
	return &Manager{o: o}
}

// Default returns a Manager over the store and settings in
// [packaging.ConfigDir], with o's other options.
func Default(o Options) (*Manager, error) {
	dir, err := packaging.ConfigDir()
	if err != nil {
		return nil, err
	}
	o.Store = packaging.NewStore(dir)
	o.Settings = settings.New(dir)
	return New(o), nil
}

// Store is the package store.
func (m *Manager) Store() *packaging.Store { return m.o.Store }

// Settings is settings.toml.
func (m *Manager) Settings() *settings.File { return m.o.Settings }

// Resolver is the config resolver the manager builds grants with.
func (m *Manager) Resolver() *config.Resolver { return m.o.Resolver }

// A Proposal is what the user is asked to approve.
type Proposal struct {
	Name   string
	Source string
	// Fresh is true when nothing was approved for this name before.
	Fresh bool
	Next  *packaging.Manifest
	// Prev is the previously approved manifest, nil when Fresh.
	Prev   *packaging.Manifest
	Change packaging.Change
	// Text is what the user must read before answering: the contribution
	// summary of a fresh install, or the contribution diff of an update.
	Text string
}

// A Consent asks the user to approve p. A nil error accepts; an error
// (ideally wrapping [packaging.ErrNotApproved]) declines and nothing is
// installed. It is called after the package is staged and read, before
// anything lands, under the store lock.
type Consent func(ctx context.Context, p Proposal) error

// InstallRequest describes one install.
type InstallRequest struct {
	// Source is a path, <git-url>[@rev], crates.io:<crate>[@ver] or a bare
	// extension name.
	Source string
	// Name, if set, is the extension name the manifest must declare.
	Name string
	// Registry is the sparse registry ("sparse+URL") for crate sources;
	// empty means crates.io.
	Registry string
	// Build allows `cargo install` for crate sources.
	Build bool
	// Consent approves a fresh install or a widening update. Nil declines
	// both (a non-widening update needs no consent).
	Consent Consent
	// Enable enables the extension once it is installed (what
	// [Manager.EnableWith] does, asking Ask for required config fields
	// that are unset), and the outcome carries the grant a running session
	// activates. False leaves settings.toml alone.
	Enable bool
	// Ask asks for required config when Enable; nil asks nothing, and a
	// required field that is unset fails the enable (the install stays).
	Ask host.AskSink
	// repair replaces a damaged store copy with the fetched package.
	repair bool
	// cooldown is the update's cooldown request (cooldown.go).
	cooldown *cooldownRequest
}

// An Outcome reports a finished install or update.
type Outcome struct {
	Name   string
	Source string
	Kind   packaging.SourceKind
	// Fresh: nothing was approved for this name before.
	Fresh bool
	// Unchanged: identical content and source; nothing was written.
	Unchanged bool
	// Change is the contribution diff against the previous approval.
	Change packaging.Change
	Entry  packaging.LockEntry
	// Enabled says whether settings.toml enables the extension.
	Enabled bool
	// Warnings are manifest warnings and skipped git submodules.
	Warnings []string
	// Grant is the grant a session runs the extension with, set when
	// [InstallRequest.Enable] enabled it.
	Grant *host.Grant
	// Held: the update cooldown held every newer version back; nothing
	// changed (Notes says what waits and until when).
	Held bool
	// Notes are what the user should read about the update cooldown.
	Notes []string
}

// Install stages the source, shows the proposal to req.Consent and
// commits only after consent (for an update that widens nothing, without
// asking). An already-installed name is updated in place.
func (m *Manager) Install(ctx context.Context, req InstallRequest) (*Outcome, error) {
	src, err := m.parseSource(ctx, req.Source)
	if err != nil {
		return nil, err
	}
	if src.Kind == packaging.SourceMarketplace && req.Name == "" {
		req.Name, _, _ = strings.Cut(src.Raw, "@") // the entry installs as the extension it names
	}
	out, err := m.install(ctx, src, req)
	if err != nil || !req.Enable {
		return out, err
	}
	g, err := m.EnableWith(ctx, out.Name, req.Ask)
	if err != nil {
		return out, fmt.Errorf("%s is installed, but %w; fix that and run `yolop ext enable %s`", out.Name, err, out.Name)
	}
	out.Enabled, out.Grant = true, &g
	return out, nil
}

func (m *Manager) install(ctx context.Context, src packaging.Source, req InstallRequest) (*Outcome, error) {
	out := &Outcome{Source: src.String(), Kind: src.Kind}
	if src.Kind == packaging.SourceCrate && req.Registry == "" {
		// No --registry: the default from settings.toml, else crates.io.
		reg, err := m.o.Settings.Registry(ctx)
		if err != nil {
			return nil, err
		}
		req.Registry = reg
	}
	if src.Kind == packaging.SourceCrate && src.Registry == "" && req.Registry != "" {
		// Label the source with the registry it comes from, in the lock,
		// the consent text and every message.
		src.Registry = req.Registry
		out.Source = src.String()
	}
	fetch, provision, err := m.fetcher(src, req.Registry, req.Build, out, m.gate(ctx, req, out))
	if err != nil {
		return nil, err
	}
	fetch = m.gateFetch(src, req.Name, fetch, out) // advisories: a critical one refuses the version
	// The previously approved sources by name: switching an installed
	// extension to another source needs consent even when the manifest
	// is the same (the code behind it is not). Read before the store's
	// exclusive lock is taken; Install re-checks the entry under it.
	prevSources := map[string]packaging.LockEntry{}
	if lock, err := m.o.Store.ReadLock(ctx); err == nil {
		for _, e := range lock.Extensions {
			prevSources[e.Name] = e
		}
	}
	res, err := m.o.Store.Install(ctx, packaging.InstallOptions{
		Source:    src,
		Fetch:     fetch,
		Provision: provision,
		Repair:    req.repair,
		Name:      req.Name,
		Approve: func(next, prev *packaging.Manifest, ch packaging.Change) error {
			if err := next.CheckEngines(m.o.HostVersion); err != nil {
				return err // nothing to approve: it would not run here
			}
			p := proposal(src, next, prev, ch)
			p.Text += m.sandboxText(ctx, next)
			switched := false
			if old, ok := prevSources[next.Name]; ok && prev != nil && !old.SameSource(src) {
				switched = true
				p.Text = fmt.Sprintf("%s is installed from %s; this replaces it with %s.\n%s", next.Name, old.Source, src, p.Text)
			}
			if !p.Fresh && !ch.Widens() && !switched {
				return nil // narrowing or notes only: applied, reported in the outcome
			}
			if req.Consent == nil {
				return fmt.Errorf("%w: no way to ask for consent", packaging.ErrNotApproved)
			}
			return req.Consent(ctx, p)
		},
	})
	if err != nil {
		return nil, err
	}
	out.Name = res.Manifest.Name
	out.Fresh = res.Previous == nil
	out.Unchanged = res.Unchanged
	out.Change = res.Change
	out.Entry = res.Entry
	out.Warnings = append(out.Warnings, res.Manifest.Warnings...)
	if !res.Unchanged {
		if err := m.recordInstalled(ctx, &res.Entry); err != nil {
			out.Warnings = append(out.Warnings, err.Error())
		}
	}
	if src.Kind == packaging.SourcePath {
		// A stored package's bin/ was provisioned and is pinned; a path
		// source's may simply not be built yet.
		if _, err := serverMissing(res.Manifest); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("server binary not found: %v; %s is installed but cannot start until it exists (`yolop ext list` shows it degraded until then)", err, out.Name))
		}
	}
	if e, ok, err := m.o.Settings.Entry(ctx, out.Name); err == nil {
		out.Enabled = ok && e.Enabled
	}
	return out, nil
}

func proposal(src packaging.Source, next, prev *packaging.Manifest, ch packaging.Change) Proposal {
	p := Proposal{Name: next.Name, Source: src.String(), Fresh: prev == nil, Next: next, Prev: prev, Change: ch}
	if p.Fresh {
		p.Text = packaging.Summary(next) + signerText(ch)
	} else {
		p.Text = fmt.Sprintf("Contribution diff for %s (%s -> %s):\n%s", next.Name, prev.Version, next.Version, ch.String())
	}
	return p
}

// fetcher returns the staging fetcher for src (nil for a path source) and,
// for a crate, the provisioning step that runs after consent.
func (m *Manager) fetcher(src packaging.Source, registry string, build bool, out *Outcome, gate fetch.Gate) (fetch.FetchFunc, fetch.ProvisionFunc, error) {
	if src.Kind == packaging.SourcePath {
		return nil, nil, nil
	}
	f := m.o.Fetchers[src.Kind]
	if f == nil && src.Kind == packaging.SourceGit {
		f = fetch.Git{AllowFile: m.o.AllowFileGit}
	}
	if f == nil {
		if src.Kind == packaging.SourceCrate {
			return nil, nil, fmt.Errorf("installing %s: crate sources are not available in this build; install from a path or a git URL", src)
		}
		return nil, nil, fmt.Errorf("installing %s: unknown source kind %q", src, src.Kind)
	}
	return f.Open(src, fetch.Request{Registry: registry, Build: build, Warn: func(w string) { out.Warnings = append(out.Warnings, w) }, Gate: gate})
}

// Update re-resolves the recorded source of an installed extension. An
// identical content hash is a no-op (Outcome.Unchanged); a widening change
// needs consent; a narrowing one is applied. A package whose store copy was
// changed on disk is re-fetched and needs consent as a fresh install.
func (m *Manager) Update(ctx context.Context, name string, consent Consent) (*Outcome, error) {
	return m.UpdateFrom(ctx, name, "", consent)
}

// UpdateFrom is [Manager.Update] of a crate source from another sparse
// registry ("sparse+URL"; empty means the recorded one): a crate that moved
// registries, or a mirror. The new registry is recorded in the lock, and
// the change of source needs consent like any other.
func (m *Manager) UpdateFrom(ctx context.Context, name, registry string, consent Consent) (*Outcome, error) {
	return m.UpdateWith(ctx, name, UpdateOptions{Registry: registry}, consent)
}

// UpdateWith is [Manager.UpdateFrom] with the update's options: the
// registry, and Now to install the newest version without the update
// cooldown.
func (m *Manager) UpdateWith(ctx context.Context, name string, o UpdateOptions, consent Consent) (*Outcome, error) {
	registry := o.Registry
	lock, err := m.o.Store.ReadLock(ctx)
	if err != nil {
		return nil, err
	}
	e := lock.Entry(name)
	if e == nil {
		return nil, fmt.Errorf("update %s: %w (see `yolop ext list`; install it with `yolop ext install <source>`)", name, packaging.ErrNotInstalled)
	}
	src, err := m.lockedSource(e)
	if err != nil {
		return nil, fmt.Errorf("update %s: the recorded source %q no longer parses: %w", name, e.Source, err)
	}
	req := InstallRequest{Name: name, Registry: e.Registry, Consent: consent, cooldown: updateCooldown(e, o)}
	if registry != "" {
		if src.Kind != packaging.SourceCrate {
			return nil, fmt.Errorf("update %s: --registry applies to crate sources; %s is installed from %s", name, name, e.Source)
		}
		src.Registry, req.Registry = registry, registry
	}
	_, verr := m.o.Store.VerifyInstalled(ctx, name)
	out, err := m.install(ctx, src, req)
	if errors.Is(err, fetch.ErrHeld) {
		return m.held(ctx, e, req), nil
	}
	if err != nil || verr == nil || !out.Unchanged || src.Kind == packaging.SourcePath {
		return out, err
	}
	// The source still has the approved content but the store copy does
	// not: ask again as for a fresh install, then replace the copy.
	return m.reinstall(ctx, src, req, verr)
}

// Refresh is what a reload of an extension being edited needs before its
// server restarts. A path source is referenced in place, so code edits
// run as they are; its manifest, though, is pinned at approval, and
// Refresh re-pins it (the [Manager.Update] of that source) when the
// change widens nothing — unchanged, narrowed or notes only — without
// asking: the grant did not grow. A change that widens the grant is
// refused with an error matching [packaging.ErrManifestChanged] that
// shows the diff and names update_extension and `yolop ext update`,
// which ask the user; nothing is written then. Other sources are fetched
// copies that reloading does not touch: Refresh returns nil, nil.
func (m *Manager) Refresh(ctx context.Context, name string) (*Outcome, error) {
	lock, err := m.o.Store.ReadLock(ctx)
	if err != nil {
		return nil, err
	}
	e := lock.Entry(name)
	if e == nil {
		return nil, fmt.Errorf("reload %s: %w (see `yolop ext list`)", name, packaging.ErrNotInstalled)
	}
	if e.Kind != packaging.SourcePath {
		return nil, nil
	}
	var widened *Proposal
	out, err := m.Update(ctx, name, func(_ context.Context, p Proposal) error {
		widened = &p
		return packaging.ErrManifestChanged
	})
	if widened != nil {
		return nil, fmt.Errorf("reload %s: %w: %s widens what the user approved, so it was not reloaded (the running server is left as it was):\n%s\ncall update_extension %s (or run `yolop ext update %s`) to show the user the change and ask",
			name, packaging.ErrManifestChanged, e.Source, strings.TrimRight(widened.Text, "\n"), name, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reload %s: %w", name, err)
	}
	return out, nil
}

// reinstall replaces a damaged store copy with a fresh fetch of the same
// approved source, after consent.
func (m *Manager) reinstall(ctx context.Context, src packaging.Source, req InstallRequest, damage error) (*Outcome, error) {
	lock, err := m.o.Store.ReadLock(ctx)
	if err != nil {
		return nil, err
	}
	e := lock.Entry(req.Name)
	if e == nil {
		return nil, fmt.Errorf("update %s: %w", req.Name, packaging.ErrNotInstalled)
	}
	approved, err := e.ApprovedManifest()
	if err != nil {
		return nil, err
	}
	if req.Consent == nil {
		return nil, fmt.Errorf("update %s: %w: the installed copy must be re-approved (%v)", req.Name, packaging.ErrNotApproved, damage)
	}
	p := Proposal{Name: req.Name, Source: src.String(), Fresh: true, Next: approved, Change: packaging.Diff(nil, approved),
		Text: fmt.Sprintf("The installed copy of %s was changed on disk (%v).\nRe-installing it from %s grants:\n%s", req.Name, damage, src, packaging.Summary(approved))}
	if err := req.Consent(ctx, p); err != nil {
		return nil, fmt.Errorf("update %s: %w", req.Name, err)
	}
	// Accept exactly what was approved; anything else asks again. The
	// damaged copy is replaced in one atomic commit, or left as it is.
	inner := req
	inner.repair = true
	inner.Consent = func(ctx context.Context, p Proposal) error {
		if packaging.Diff(approved, p.Next).Empty() {
			return nil
		}
		return req.Consent(ctx, p)
	}
	out, err := m.install(ctx, src, inner)
	if err != nil {
		return nil, fmt.Errorf("update %s: re-installing failed and the damaged copy is still in place; run `yolop ext update %s` again: %w", req.Name, req.Name, err)
	}
	return out, nil
}

// Names lists the installed extension names (from extensions.lock).
func (m *Manager) Names(ctx context.Context) ([]string, error) {
	lock, err := m.o.Store.ReadLock(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range lock.Extensions {
		names = append(names, e.Name)
	}
	return names, nil
}

// Enable checks an installed extension (its content hash must match the
// approval), marks it enabled in settings.toml and returns its grant.
func (m *Manager) Enable(ctx context.Context, name string) (host.Grant, error) {
	return m.EnableWith(ctx, name, nil)
}

// EnableWith is [Manager.Enable] with setup on enable (Options.Setup): the
// required config fields that are unset are asked for through ask first.
func (m *Manager) EnableWith(ctx context.Context, name string, ask host.AskSink) (host.Grant, error) {
	v, err := m.o.Store.VerifyInstalled(ctx, name)
	if err == nil {
		err = v.Manifest.CheckEngines(m.o.HostVersion)
	}
	if err != nil {
		return host.Grant{}, fmt.Errorf("cannot enable %s: %w", name, err)
	}
	res, err := m.o.Resolver.Setup(ctx, v.Manifest, ask)
	if res != nil && len(res.Secrets) > 0 && m.o.SecretsChanged != nil {
		m.o.SecretsChanged(ctx)
	}
	if err != nil {
		return host.Grant{}, fmt.Errorf("cannot enable %s: %w", name, err)
	}
	g, _, err := m.Grant(ctx, v.Manifest)
	if err != nil {
		return host.Grant{}, fmt.Errorf("cannot enable %s: %w", name, err)
	}
	g.Verify = v.Verifier.Check
	g.Server.Checksum = v.ServerChecksum() // a transport that checks what it runs refuses another file
	if _, err := m.o.Settings.Enable(ctx, name); err != nil {
		return host.Grant{}, err
	}
	return g, nil
}

// Disable marks an extension disabled in settings.toml. It reports
// whether it was enabled; a name that is neither installed nor in
// settings is an error.
func (m *Manager) Disable(ctx context.Context, name string) (bool, error) {
	changed, err := m.o.Settings.Disable(ctx, name)
	if err != nil {
		return false, err
	}
	if changed {
		return true, nil
	}
	names, err := m.Names(ctx)
	if err != nil {
		return false, err
	}
	if !slices.Contains(names, name) {
		return false, fmt.Errorf("no extension %q is installed or enabled (see `yolop ext list`)", name)
	}
	return false, nil
}

// Remove deletes an installed extension: its settings entry (config
// included), its store copy and its lock entry. A path source's directory
// is left alone.
func (m *Manager) Remove(ctx context.Context, name string) error {
	hadEntry, err := m.o.Settings.Remove(ctx, name)
	if err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	err = m.o.Store.Remove(ctx, name)
	if errors.Is(err, packaging.ErrNotInstalled) && hadEntry {
		err = nil // only a stale settings entry was left
	}
	if err == nil {
		if ferr := m.o.Resolver.Secrets.DeleteExtension(ctx, name); ferr != nil {
			return fmt.Errorf("removed %s, but its secrets could not be deleted: %w", name, ferr)
		}
		if m.o.SecretsChanged != nil {
			m.o.SecretsChanged(ctx)
		}
	}
	return err
}

// A KeptOff is an enabled extension [Manager.Grants] did not grant: State
// is "blocked" (a critical registry advisory affects its installed
// version) or "off" (it cannot load: not installed, tampered, malformed,
// invalid config), and Reason says why.
type KeptOff struct {
	Name, State, Reason string
}

// Grants returns the grant of every enabled extension, in settings order.
// An extension that cannot load — not installed, tampered, malformed,
// invalid config — or that a critical advisory blocks is skipped with a
// warning and listed in kept, never an error; a malformed settings.toml
// is a warning too.
func (m *Manager) Grants(ctx context.Context) (gs []host.Grant, warns []string, kept []KeptOff) {
	ents, err := m.o.Settings.Extensions(ctx)
	if err != nil {
		return nil, []string{fmt.Sprintf("no extensions loaded: %v", err)}, nil
	}
	skip := func(name string, err error) {
		warns = append(warns, fmt.Sprintf("skipping enabled extension %s: %v", name, err))
		kept = append(kept, KeptOff{Name: name, State: "off", Reason: err.Error()})
	}
	for _, e := range ents {
		if !e.Enabled {
			continue
		}
		v, err := m.o.Store.VerifyInstalled(ctx, e.Name)
		if err == nil {
			err = v.Manifest.CheckEngines(m.o.HostVersion)
		}
		if err != nil {
			skip(e.Name, err)
			continue
		}
		if st := m.entryAdvisories(ctx, &v.Entry); st.Blocked() {
			warns = append(warns, fmt.Sprintf("not starting enabled extension %s: %s", e.Name, st.Reason(e.Name)))
			kept = append(kept, KeptOff{Name: e.Name, State: "blocked", Reason: st.Reason(e.Name)})
			continue
		} else if len(st.Warnings)+len(st.Allowed) > 0 || st.Unchecked != "" {
			warns = append(warns, st.Lines(e.Name)...)
		}
		g, gw, err := m.Grant(ctx, v.Manifest)
		if err != nil {
			skip(e.Name, err)
			continue
		}
		g.Verify = v.Verifier.Check            // again before every spawn
		g.Server.Checksum = v.ServerChecksum() // a transport that checks what it runs refuses another file
		for _, w := range append(slices.Clone(v.Manifest.Warnings), gw...) {
			warns = append(warns, fmt.Sprintf("extension %s: %s", e.Name, w))
		}
		gs = append(gs, g)
	}
	return gs, warns, kept
}

// Grant is the one way from an approved manifest to the grant a session
// runs: [config.Resolver.Grant] (the validated config, secrets and `env`
// fields as the server's environment, ${VAR} expanded), with warnings
// stripped of the extension-name prefix the caller adds.
func (m *Manager) Grant(ctx context.Context, mf *packaging.Manifest) (host.Grant, []string, error) {
	g, warns, err := m.o.Resolver.Grant(ctx, mf)
	for i, w := range warns {
		warns[i] = strings.TrimPrefix(w, "extension "+mf.Name+": ")
	}
	return g, warns, err
}

// Info describes one extension for `list`.
type Info struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Source  string `json:"source,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Commit  string `json:"commit,omitempty"`
	// PathSource marks a path source: live, not hash-verified.
	PathSource bool `json:"path_source"`
	Installed  bool `json:"installed"`
	Enabled    bool `json:"enabled"`
	// Health is "ok", "warning" (see Warnings), "manifest changed —
	// needs approval" for a path source whose live manifest widens the
	// approved one, or "degraded: server binary not found (<command>)"
	// (or "not executable") when the server's executable is not there (a
	// path source not built yet, say); Warnings then says where it was
	// looked for.
	Health   string   `json:"health"`
	Warnings []string `json:"warnings,omitempty"`
	Tools    []string `json:"tools"`
	// Config lists the declared config fields and whether each is set;
	// values are never reported.
	Config []ConfigStatus `json:"config"`
	Dir    string         `json:"dir,omitempty"`
	// Advisories is what the registry's advisories say about the
	// installed version (a crate source); Health is "blocked: critical
	// advisory <id>" when one stops it.
	Advisories *AdvisoryStatus `json:"advisories,omitempty"`
}

// ConfigStatus is one config field of an extension.
type ConfigStatus struct {
	Name     string `json:"name"`
	Type     string `json:"type,omitempty"`
	Required bool   `json:"required,omitempty"`
	Secret   bool   `json:"secret,omitempty"`
	// Set: present in the capability config in settings.toml, or (for a
	// secret) in the credential store.
	Set bool `json:"set"`
}

// List describes every installed extension, plus settings entries naming
// an extension that is not installed. Only an unreadable extensions.lock
// fails; a malformed settings.toml becomes a warning on every entry.
func (m *Manager) List(ctx context.Context) ([]Info, error) {
	inst, err := m.o.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	ents, serr := m.o.Settings.Extensions(ctx)
	byName := map[string]settings.Entry{}
	for _, e := range ents {
		byName[e.Name] = e
	}
	out := []Info{}
	for _, in := range inst {
		se, inSettings := byName[in.Name]
		delete(byName, in.Name)
		info := Info{Name: in.Name, Installed: in.Entry != nil, Enabled: inSettings && se.Enabled, PathSource: in.PathSource, Dir: in.Dir, Health: "ok", Tools: []string{}, Config: []ConfigStatus{}}
		if in.Entry != nil {
			info.Version, info.Source, info.Kind, info.Commit = in.Entry.Version, in.Entry.Source, string(in.Entry.Kind), in.Entry.Commit
			info.PathSource = in.Entry.Kind == packaging.SourcePath
		}
		if in.Warning != "" {
			info.Health = "warning"
			if errors.Is(in.Err, packaging.ErrManifestChanged) {
				info.Health = packaging.ErrManifestChanged.Error()
			}
			info.Warnings = append(info.Warnings, in.Warning)
		}
		if serr != nil {
			info.Health = "warning"
			info.Warnings = append(info.Warnings, serr.Error())
		}
		m.listAdvisories(ctx, in.Entry, &info)
		if cmd, err := serverMissing(in.Manifest); err != nil {
			if info.Health == "ok" {
				what := "not found"
				if errors.Is(err, stdio.ErrNotExecutable) {
					what = "not executable"
				}
				info.Health = fmt.Sprintf("degraded: server binary %s (%s)", what, cmd)
			}
			info.Warnings = append(info.Warnings, err.Error())
		}
		mf := in.Manifest
		if mf == nil && in.Entry != nil {
			mf, _ = in.Entry.ApprovedManifest() // show what was approved
		}
		if mf != nil {
			info.Warnings = append(info.Warnings, mf.Warnings...)
			if mf.Yolop != nil {
				for _, t := range mf.Yolop.Tools {
					info.Tools = append(info.Tools, t.Name)
				}
			}
			fields, err := mf.ConfigFields()
			if err != nil {
				info.Health = "warning"
				info.Warnings = append(info.Warnings, err.Error())
			}
			var status map[string]bool
			if len(fields) > 0 {
				if status, err = m.o.Resolver.FieldStatus(ctx, mf); err != nil {
					info.Warnings = append(info.Warnings, err.Error())
				}
			}
			for _, f := range fields {
				set := status[f.Name]
				info.Config = append(info.Config, ConfigStatus{Name: f.Name, Type: f.Type, Required: f.Required, Secret: f.Secret, Set: set})
			}
		}
		out = append(out, info)
	}
	for _, e := range ents {
		if _, left := byName[e.Name]; !left {
			continue
		}
		out = append(out, Info{Name: e.Name, Enabled: e.Enabled, Health: "warning", Tools: []string{}, Config: []ConfigStatus{},
			Warnings: []string{fmt.Sprintf("%s names ext:%s but it is not installed; install it, or run `yolop ext remove %s` to drop the entry", m.o.Settings.Path(), e.Name, e.Name)}})
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// serverMissing reports whether the executable of mf's capability server
// can be found the way the stdio transport (and go-plugin's, which starts
// the same way) looks for it: a bare name in the package's bin/ and then
// on PATH, a relative path inside the package. It returns the command and
// the transport's error, which says where it looked; a nil error when the
// executable is there or nothing is to be found (no server, a WASM
// module, whose existence is checked at load).
func serverMissing(mf *packaging.Manifest) (string, error) {
	if mf == nil || mf.Yolop == nil || mf.Yolop.CapabilityServer == nil || mf.Yolop.CapabilityServer.TransportName() == "wasm" {
		return "", nil
	}
	g, err := hostgrant.FromManifest(mf)
	if err != nil {
		return "", nil
	}
	if _, err := stdio.New(stdio.Options{}).Resolve(g.Server); err != nil && (errors.Is(err, stdio.ErrCommandNotFound) || errors.Is(err, stdio.ErrNotExecutable)) {
		return g.Server.Command, err
	}
	return "", nil
}
