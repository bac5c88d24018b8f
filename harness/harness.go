// Package harness is everything a yolop binary needs beyond the runtime
// in core, for any front-end to reuse: the CLI, the MCP gateway, a TUI, a
// user's own binary.
//
// A [Harness] opens one config directory and ties its pieces together:
// settings.toml ([settings]), the credential store connections.toml
// ([secrets]), config resolution and the secret scrubber ([config]), the
// extension manager over the store and extensions.lock ([manager]) with a
// fetcher per source kind ([fetch]), and the built-in capabilities
// ([builtin]: extensions, set_extension_secret). [Harness.NewSession]
// assembles a [host.Session] over the enabled extensions the way
// `yolop session` does.
//
// A minimal custom host:
//
//	h, err := harness.Open(ctx, harness.Options{})
//	...
//	s, warnings := h.NewSession(ctx, harness.SessionOptions{})
//	defer s.Close()
//	s.Start(ctx)
//	res, err := s.CallTool(ctx, "echo", "call-1", json.RawMessage(`{"text":"hi"}`), nil)
package harness

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/doctor"
	"yolop.dev/harness/builtin"
	"yolop.dev/harness/builtin/coding"
	"yolop.dev/harness/config"
	"yolop.dev/harness/fetch"
	"yolop.dev/harness/firstseen"
	"yolop.dev/harness/manager"
	"yolop.dev/harness/secrets"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
	"yolop.dev/transport/stdio"
)

// Options configure a [Harness]. The zero value opens the default config
// directory with no logging, crate sources from crates.io and servers run
// by the stdio transport.
type Options struct {
	// ConfigDir is the config directory. Empty means
	// [packaging.ConfigDir]: $YOLOP_CONFIG_DIR, else the user config
	// directory + /yolop.
	ConfigDir string
	// Logger is the host logger. Nil means no logging.
	Logger hclog.Logger
	// AllowFileGit accepts file:// git URLs. Tests only; false refuses them.
	AllowFileGit bool
	// Crate is the crate fetcher's configuration (progress display, notes,
	// user agent); its ConfigDir and, when nil, Logger are filled in.
	Crate fetch.Crate
	// Transport starts extension servers. Nil means [core.Transports]
	// routing each server by its manifest's transport: "stdio" to
	// [stdio.New] with Logger, and the others to Transports.
	Transport core.Transport
	// Transports adds transports by name (core.TransportWASM,
	// core.TransportGoPlugin) to the default router; a binary registers
	// the ones it is built with. Ignored when Transport is set.
	Transports map[string]core.Transport
	// Version is the running yolop's version: a manifest whose
	// engines.yolop it does not satisfy is refused at install and not run.
	// Empty skips the check.
	Version string
	// Scrubber is the secret scrubber to fill, for a front-end that wraps
	// its writers (and Logger's) before opening the harness. Nil means a
	// new one.
	Scrubber *config.Scrubber
	// Now is the clock of the update cooldown; nil means time.Now.
	Now func() time.Time
}

// A Harness is one config directory opened for a front-end. Its methods are
// safe for concurrent use.
type Harness struct {
	o        Options
	dir      string
	log      hclog.Logger
	store    *packaging.Store
	settings *settings.File
	secrets  *secrets.File
	resolver *config.Resolver
	scrub    *config.Scrubber
	mgr      *manager.Manager
	crate    fetch.Crate
	// live is the running session, if any, so a secret saved through
	// set_extension_secret reaches its extension at once.
	live atomic.Pointer[host.Session]
}

// Open opens the config directory o names. Nothing is created on disk
// until something is written; the scrubber is loaded from the credential
// store (a store that cannot be read is logged: its secrets cannot reach
// any server either).
func Open(ctx context.Context, o Options) (*Harness, error) {
	dir := o.ConfigDir
	if dir == "" {
		var err error
		if dir, err = packaging.ConfigDir(); err != nil {
			return nil, err
		}
	}
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	scrub := o.Scrubber
	if scrub == nil {
		scrub = config.NewScrubber()
	}
	h := &Harness{o: o, dir: dir, log: log, scrub: scrub}
	h.store = packaging.NewStore(dir)
	h.settings = settings.New(dir)
	h.secrets = secrets.NewFile(dir)
	h.resolver = &config.Resolver{Settings: h.settings, Secrets: h.secrets, SettingsPath: h.settings.Path(), Logger: log}
	crate := o.Crate
	crate.ConfigDir = dir
	if crate.Logger == nil {
		crate.Logger = log
	}
	h.crate = crate
	h.mgr = manager.New(manager.Options{
		Store:        h.store,
		Settings:     h.settings,
		Resolver:     h.resolver,
		AllowFileGit: o.AllowFileGit,
		Fetchers: map[packaging.SourceKind]fetch.Fetcher{
			packaging.SourceGit:         fetch.Git{AllowFile: o.AllowFileGit},
			packaging.SourceCrate:       crate,
			packaging.SourceMarketplace: h.marketplaceFetcher(),
		},
		Marketplaces:   h.Marketplaces(),
		SecretsChanged: h.ReloadScrubber,
		HostVersion:    o.Version,
		FirstSeen:      firstseen.New(dir), // the update cooldown (harness/firstseen)
		Now:            o.Now,
		Advisories:     h.advisories, // registry advisories gate crate versions (advisor.go)
	})
	h.ReloadScrubber(ctx)
	return h, nil
}

// Registry returns the registry client for registry ("sparse+URL"; empty
// means [extensions] registry in settings.toml, else crates.io).
func (h *Harness) Registry(ctx context.Context, registry string) (*cratesio.Client, error) {
	if registry == "" {
		var err error
		if registry, err = h.settings.Registry(ctx); err != nil {
			return nil, err
		}
	}
	return h.crate.Client(ctx, registry)
}

// ConfigDir is the config directory.
func (h *Harness) ConfigDir() string { return h.dir }

// Manager is the extension manager.
func (h *Harness) Manager() *manager.Manager { return h.mgr }

// Store is the package store and extensions.lock.
func (h *Harness) Store() *packaging.Store { return h.store }

// Settings is settings.toml.
func (h *Harness) Settings() *settings.File { return h.settings }

// Secrets is the credential store, connections.toml.
func (h *Harness) Secrets() *secrets.File { return h.secrets }

// Resolver resolves extension config and secrets into grants.
func (h *Harness) Resolver() *config.Resolver { return h.resolver }

// Scrubber redacts every stored secret value; wrap every writer a person
// or an agent reads with [config.Scrubber.Writer].
func (h *Harness) Scrubber() *config.Scrubber { return h.scrub }

// ReloadScrubber re-reads the credential store into the scrubber, after a
// secret was stored or deleted.
func (h *Harness) ReloadScrubber(ctx context.Context) {
	if err := h.scrub.Load(ctx, h.secrets); err != nil {
		h.log.Warn("secrets cannot be read", "error", err)
	}
}

// Transport is the transport extension servers start with.
func (h *Harness) Transport() core.Transport {
	if h.o.Transport != nil {
		return h.o.Transport
	}
	ts := core.Transports{core.TransportStdio: stdio.New(stdio.Options{Logger: h.log}), TransportDeclarative: DeclarativeTransport{}}
	for name, t := range h.o.Transports {
		ts[name] = t
	}
	return ts
}

// InstalledManifest returns the verified manifest of an installed
// extension.
func (h *Harness) InstalledManifest(ctx context.Context, name string) (*packaging.Manifest, error) {
	v, err := h.store.VerifyInstalled(ctx, name)
	if err != nil {
		return nil, err
	}
	return v.Manifest, nil
}

// InstalledGrant returns the verified manifest of an installed extension
// and the grant a session would run it with: its config and secrets
// resolved when they resolve, else its static grant (so a check such as
// the doctor can still run it).
func (h *Harness) InstalledGrant(ctx context.Context, name string) (*packaging.Manifest, host.Grant, error) {
	v, err := h.store.VerifyInstalled(ctx, name)
	if err != nil {
		return nil, host.Grant{}, err
	}
	g, _, err := h.mgr.Grant(ctx, v.Manifest)
	if err != nil {
		if g, _, err = config.GrantInPlace(v.Manifest); err != nil {
			return nil, host.Grant{}, err
		}
	}
	g.Verify = v.Verifier.Check
	g.Server.Checksum = v.ServerChecksum() // a transport that checks what it runs refuses another file
	return v.Manifest, g, nil
}

// InPlace loads the package in dir in place — the author's dev loop,
// nothing approved — and returns its manifest and static grant, with
// warnings (manifest findings, unset ${VAR}s).
func InPlace(dir string) (*packaging.Manifest, host.Grant, []string, error) {
	m, err := packaging.Load(dir)
	if err != nil {
		return nil, host.Grant{}, nil, err
	}
	g, warns, err := config.GrantInPlace(m)
	if err != nil {
		return nil, host.Grant{}, nil, err
	}
	return m, g, append(slices.Clone(m.Warnings), warns...), nil
}

// InPlaceDirs loads each of dirs with [InPlace], in order, and returns
// their grants and all their warnings; the error of the first that fails
// names its directory. It is what a front-end's --ext flags need.
func InPlaceDirs(dirs []string) ([]host.Grant, []string, error) {
	var grants []host.Grant
	var warnings []string
	for _, dir := range dirs {
		_, g, warns, err := InPlace(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
		grants = append(grants, g)
		warnings = append(warnings, warns...)
	}
	return grants, warnings, nil
}

// SecretField returns the declared secret field of an installed extension,
// or an error listing the secret fields it has.
func (h *Harness) SecretField(ctx context.Context, name, field string) (*packaging.Manifest, packaging.ConfigField, error) {
	m, err := h.InstalledManifest(ctx, name)
	if err != nil {
		return nil, packaging.ConfigField{}, err
	}
	fields, err := m.ConfigFields()
	if err != nil {
		return nil, packaging.ConfigField{}, err
	}
	var names []string
	for _, f := range fields {
		if f.Secret {
			if f.Name == field {
				return m, f, nil
			}
			names = append(names, f.Name)
		}
	}
	if len(names) == 0 {
		return nil, packaging.ConfigField{}, fmt.Errorf("extension %s declares no secret config fields", name)
	}
	return nil, packaging.ConfigField{}, fmt.Errorf("extension %s has no secret field %q; its secret fields are: %s", name, field, strings.Join(names, ", "))
}

// A SecretState says whether one declared secret field of an installed
// extension is set in the credential store; it never holds a value.
type SecretState struct {
	Extension, Field string
	Env              string // the variable the server gets it in
	Set              bool
}

// SecretStates lists the declared secret fields of the installed
// extensions (of name only, when it is not empty), each with whether it
// is set, in install order.
func (h *Harness) SecretStates(ctx context.Context, name string) ([]SecretState, error) {
	installed, err := h.store.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []SecretState
	for _, in := range installed {
		if (name != "" && in.Name != name) || in.Manifest == nil {
			continue
		}
		fields, err := in.Manifest.ConfigFields()
		if err != nil {
			return nil, err
		}
		set, err := h.secrets.Extension(ctx, in.Name)
		if err != nil {
			return nil, err
		}
		for _, f := range fields {
			if f.Secret {
				_, ok := set[f.Name]
				out = append(out, SecretState{Extension: in.Name, Field: f.Name, Env: f.Env, Set: ok})
			}
		}
	}
	return out, nil
}

// SetSecret validates v against the field's schema (the message never
// describes the value), stores it in the credential store, teaches the
// scrubber and, when a session is live, restarts that extension with it.
func (h *Harness) SetSecret(ctx context.Context, name, field string, v secrets.Secret) (packaging.ConfigField, error) {
	m, f, err := h.SecretField(ctx, name, field)
	if err != nil {
		return f, err
	}
	if err := config.CheckSecret(m, field, v); err != nil {
		return f, err
	}
	if err := h.secrets.Set(ctx, name, field, v); err != nil {
		return f, err
	}
	h.scrub.Add(name, field, v)
	if s := h.live.Load(); s != nil {
		if _, err := h.resolver.PushSession(ctx, s, m); err != nil {
			return f, fmt.Errorf("saved, but the running extension %s did not take it: %w", name, err)
		}
	}
	return f, nil
}

// BuiltinOptions wire the built-in capabilities to a front-end.
type BuiltinOptions struct {
	// Ask asks the user: install consent and set_extension_secret. Nil
	// refuses installs and secret entry (there is no one to ask).
	Ask host.AskSink
	// Activate and Deactivate make enable and disable through the
	// extensions capability live in a running session. Nil means they
	// take effect with the next session.
	Activate   func(host.Grant)
	Deactivate func(name string) bool
	// Reload and InSession let reload_extension restart an extension of
	// the running session (see [builtin.ExtensionsOptions]). Nil refuses
	// it.
	Reload    func(ctx context.Context, name string) error
	InSession func(name string) (running, inPlace bool)
	// WorkspaceRoot is where scaffold_extension writes and where
	// doctor_extension's package directories must be; empty refuses both.
	WorkspaceRoot string
	// Skills, if set, is the session whose contributed skills
	// list_skills and read_skill serve; nil leaves those tools out.
	Skills func() builtin.SkillSource
}

// Builtins returns the always-on built-in capabilities: the extensions
// capability (install, list, enable, disable, remove, scaffold),
// set_extension_secret, and with o.Skills list_skills and read_skill.
func (h *Harness) Builtins(o BuiltinOptions) []host.Capability {
	caps := []host.Capability{
		builtin.NewExtensions(h.mgr, builtin.ExtensionsOptions{Ask: o.Ask, Activate: o.Activate, Deactivate: o.Deactivate, WorkspaceRoot: o.WorkspaceRoot,
			Reload: o.Reload, InSession: o.InSession,
			Doctor: func(ctx context.Context, name, dir string) (*doctor.Report, error) {
				do := doctor.Options{Workspace: o.WorkspaceRoot}
				if name != "" {
					return h.DoctorInstalled(ctx, name, do)
				}
				return h.Doctor(ctx, dir, do)
			}}),
		config.NewSecretTool(config.SecretToolOptions{
			Secrets:  h.secrets,
			Ask:      o.Ask,
			Manifest: h.InstalledManifest,
			Scrubber: h.scrub,
			OnSaved: func(ctx context.Context, m *packaging.Manifest) error {
				s := h.live.Load()
				if s == nil {
					return nil
				}
				_, err := h.resolver.PushSession(ctx, s, m)
				return err
			},
		}),
	}
	if o.Skills != nil {
		caps = append(caps, builtin.NewSkills(o.Skills))
	}
	return caps
}

// SessionOptions configure [Harness.NewSession]. The zero value runs the
// enabled extensions with the built-ins, no user to ask, the current
// directory as workspace and no live config.
type SessionOptions struct {
	// Extra are grants run beside the enabled extensions, first (e.g.
	// packages loaded in place with [config.GrantInPlace]).
	Extra []host.Grant
	// NoEnabled leaves out the extensions enabled in settings.toml.
	NoEnabled bool
	// NoBuiltins leaves out the built-in capabilities.
	NoBuiltins bool
	// Ask answers ui/ask questions and the built-ins' questions; nil
	// answers them cancelled. Everything else the session reports —
	// status, live config changes, warnings, tool progress — is an event:
	// see [host.Session.Subscribe].
	Ask host.AskSink
	// SessionID identifies the session to extensions. Empty means one made
	// from the time.
	SessionID string
	// WorkspaceRoot is the workspace. Empty means the current directory.
	WorkspaceRoot string
	// Contributed serve tools from outside the host (the MCP client of
	// yolop.dev/mcp/client), synced with the session's extensions.
	Contributed []host.ContributedTools
	// LiveConfig turns on live config: changes to settings.toml and
	// connections.toml are re-resolved and pushed to the session's
	// installed extensions, and each extension whose config changed or
	// could not be applied is a config.changed event.
	LiveConfig bool
	// Record, if set, is a file the session's YEP dialogues are written to
	// as txtar when it closes (see yolop.dev/harness/record).
	Record string
	// CodingTools adds the built-in capability "builtin:coding" (see
	// [coding]): read_file, write_file, edit_file, list_files, grep and
	// bash, confined to the session's workspace root and going through
	// the session's hooks like any tool. It is added whatever NoBuiltins
	// says; false leaves it out.
	CodingTools bool
	// Approve decides a tool call that needs approval — its manifest says
	// approval = "always", or the user's [approval] table in
	// settings.toml asks (see [ApprovalPolicy]) — and returns whether it
	// may run and why. Nil puts the question to Ask as a ui/ask with the
	// options "allow" and "deny". A front-end with no one to ask passes a
	// [RunApprover]'s.
	Approve func(ctx context.Context, r host.ApprovalRequest) (approved bool, reason string, err error)
}

// A Session is a [host.Session] assembled by a [Harness]. Close it.
type Session struct {
	*host.Session
	h         *Harness
	stopWatch func()
	inPlace   []host.Grant
	extra     []host.Grant
	rec       *recording
	policy    sessionPolicy
	keptOff   []manager.KeptOff
}

// KeptOff returns, as status bar entries, the enabled extensions the
// session did not start: "blocked" by a critical registry advisory, or
// "off" because they cannot load, each with its reason (the session's
// start warnings say the same at length).
func (s *Session) KeptOff() []ExtensionStatus {
	out := make([]ExtensionStatus, 0, len(s.keptOff))
	for _, k := range s.keptOff {
		out = append(out, ExtensionStatus{Name: oneLine(k.Name), Health: k.State, Reason: oneLine(k.Reason)})
	}
	return out
}

// Local returns the grants the session runs in place, by name:
// SessionOptions.Extra, which for [Harness.OpenSession] includes the
// packages it loaded. A front-end's /reload restarts one of them from its
// grant.
func (s *Session) Local() map[string]host.Grant {
	m := make(map[string]host.Grant, len(s.extra))
	for _, g := range s.extra {
		m[g.Name] = g
	}
	return m
}

// InPlace returns the grants of the packages [Harness.OpenSession] loaded
// in place, for [Session.StartInPlace].
func (s *Session) InPlace() []host.Grant { return slices.Clone(s.inPlace) }

// StartInPlace starts the session (every eager extension, see
// [host.Session.Start]) and then each of inPlace — grants of packages
// loaded in place, passed in SessionOptions.Extra — eager or not: that is
// an author's dev loop, where a missing binary should show at once. It
// returns every start error and how many of inPlace are not running.
func (s *Session) StartInPlace(ctx context.Context, inPlace []host.Grant) (errs []error, failed int) {
	if err := s.Start(ctx); err != nil {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		} else {
			errs = []error{err}
		}
	}
	for _, g := range inPlace {
		e, ok := s.Extension(g.Name)
		if !ok {
			continue
		}
		switch st, _ := e.State(); st {
		case host.StateReady:
			continue
		case host.StateDegraded, host.StateOff:
			failed++ // an eager one that failed in Start: its error is in errs
			continue
		}
		if err := e.Start(ctx); err != nil {
			failed++
			errs = append(errs, err)
		}
	}
	return errs, failed
}

// OnlyInPlaceFailed reports whether a session is of no use after
// [Session.StartInPlace] reported failed: packages were loaded in place,
// every one of them failed to start, and nothing else was asked for.
func (s *Session) OnlyInPlaceFailed(failed int) bool {
	n := len(s.inPlace)
	return n > 0 && failed == n && len(s.Stats()) == n
}

// Close stops live config, closes the session and its extensions.
func (s *Session) Close() {
	s.stopWatch()
	s.h.live.CompareAndSwap(s.Session, nil)
	s.Session.Close()
	s.saveRecording()
}

// NewSession assembles a session: the built-ins, then o.Extra, then every
// enabled extension that loads, each verified against its approval before
// every spawn, with the session tool timeout and the user's approval
// policy ([approval], see [ApprovalPolicy]) from settings.toml and every
// stored secret scrubbed from what leaves the extensions. What could not
// load is returned as warnings, never an error — a malformed [approval]
// too, after which every tool call asks for approval. Nothing is started
// until Start.
func (h *Harness) NewSession(ctx context.Context, o SessionOptions) (*Session, []string) {
	var warnings []string
	var keptOff []manager.KeptOff
	grants := append([]host.Grant(nil), o.Extra...)
	if !o.NoEnabled {
		enabled, warns, kept := h.mgr.Grants(ctx)
		warnings = append(warnings, warns...)
		grants = append(grants, enabled...)
		keptOff = kept
	}
	toolTimeout, err := h.settings.ToolTimeout(ctx)
	if err != nil {
		warnings = append(warnings, err.Error()+"; using each tool's own timeout")
	}
	s := &Session{h: h, stopWatch: func() {}, extra: slices.Clone(o.Extra), keptOff: keptOff}
	if err := s.policy.load(ctx, h.settings); err != nil {
		warnings = append(warnings, err.Error())
	}
	ws := o.WorkspaceRoot
	if ws == "" {
		ws, _ = os.Getwd()
	}
	id := o.SessionID
	if id == "" {
		id = fmt.Sprintf("s-%d", time.Now().UnixNano())
	}
	var builtins []host.Capability
	if !o.NoBuiltins {
		builtins = h.Builtins(BuiltinOptions{
			Ask:        o.Ask,
			Activate:   func(g host.Grant) { s.Activate(g) },
			Deactivate: func(n string) bool { return s.Deactivate(n) },
			Reload:     func(ctx context.Context, n string) error { return s.Reload(ctx, n) },
			InSession: func(n string) (bool, bool) {
				_, running := s.Extension(n)
				return running, running && slices.ContainsFunc(s.extra, func(g host.Grant) bool { return g.Name == n })
			},
			WorkspaceRoot: ws,
			Skills: func() builtin.SkillSource {
				if s.Session == nil {
					return nil
				}
				return s.Session
			},
		})
	}
	if o.CodingTools {
		builtins = append(builtins, coding.New(coding.Options{
			Root: func() string {
				if s.Session == nil {
					return ws
				}
				return s.Session.WorkspaceRoot()
			},
			Scrub: h.scrub.Scrub,
		}))
	}
	s.Session = host.NewSession(host.SessionOptions{
		Builtins:      builtins,
		Grants:        grants,
		Contributed:   o.Contributed,
		Transport:     s.recordTransport(o.Record, h.Transport(), &warnings),
		Logger:        h.log,
		Ask:           o.Ask,
		SessionID:     id,
		WorkspaceRoot: ws,
		ToolTimeout:   toolTimeout,
		CompileArgs:   packaging.CompileArgs,
		Extension:     host.ExtensionOptions{Scrub: h.scrub.Scrub},
		Policy:        s.policy.rule,
		Approve:       o.Approve,
	})
	h.live.Store(s.Session)
	if o.LiveConfig {
		s.stopWatch = h.watchConfig(s.Session, func(ctx context.Context) {
			if err := s.policy.load(ctx, h.settings); err != nil {
				s.Emit(host.Event{Type: yep.EventWarning, Data: yep.WarningData{Message: err.Error()}})
			}
		})
	}
	return s, warnings
}

// OpenSession is [Harness.NewSession] for a front-end that also runs
// packages loaded in place (yolop's --ext): it reads each of dirs with
// [InPlace] and applies the user's settings to it, an unusable one being
// the error, runs their grants after
// o.Extra, and returns the packages' warnings and the session's. The
// session's [Session.InPlace] lists those grants.
func (h *Harness) OpenSession(ctx context.Context, o SessionOptions, dirs []string) (*Session, []string, error) {
	var inPlace []host.Grant
	var warnings []string
	for _, dir := range dirs {
		m, g, warns, err := InPlace(dir)
		if err == nil {
			// The user's [sandbox] and [hooks] hold for a package in
			// place as for an installed one.
			err = h.resolver.ApplyUserSettings(ctx, m, &g)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
		inPlace = append(inPlace, g)
		warnings = append(warnings, warns...)
	}
	o.Extra = slices.Concat(o.Extra, inPlace)
	s, warns := h.NewSession(ctx, o)
	s.inPlace = inPlace
	return s, append(warnings, warns...), nil
}

// watchConfig applies changes to settings.toml and connections.toml to
// the installed extensions of a running session: each one's config is
// re-resolved and validated, then pushed as config/changed, or its server
// restarted when its environment changed; each is a config.changed event.
// changed runs first on every change (the session re-reads its approval
// policy). The returned function stops watching.
func (h *Harness) watchConfig(s *host.Session, changed func(context.Context)) func() {
	stop, err := config.Watch(h.dir, []string{settings.FileName, secrets.FileName}, 0, func(ctx context.Context) {
		changed(ctx)
		h.ReloadScrubber(ctx)
		for _, st := range s.Stats() {
			m, err := h.InstalledManifest(ctx, st.Name)
			if err != nil {
				continue // not installed (a package in place): nothing to re-resolve
			}
			e, ok := s.Extension(st.Name)
			if !ok {
				continue
			}
			before := e.Grant()
			restarted, err := h.resolver.Push(ctx, e, m)
			after := e.Grant()
			if err != nil || restarted || string(before.Config) != string(after.Config) {
				d := yep.ConfigChangedData{Extension: st.Name, Restarted: restarted}
				if err != nil {
					d.Error = err.Error()
				}
				s.Emit(host.Event{Type: yep.EventConfigChanged, Data: d})
			}
		}
	})
	if err != nil {
		h.log.Warn("live config changes are off for this session", "error", err)
		return func() {}
	}
	return stop
}

// Logger is the host logger (a null logger when Options.Logger was nil).
func (h *Harness) Logger() hclog.Logger { return h.log }
