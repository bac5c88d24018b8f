package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"yolop.dev/agent/tokens"
	"yolop.dev/harness/fetch"
	"yolop.dev/harness/firstseen"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// An Info describes one extension for `yolop ext info`: what it
// contributes (the summary consent shows), and, when it is installed, its
// approval, source, lock fields, health and config.
type Info struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Installed: in extensions.lock. A package directory or a registry
	// crate that is not installed is described from its manifest alone.
	Installed bool `json:"installed"`
	Enabled   bool `json:"enabled"`
	// Source is the install source (the lock's, or the one described).
	Source string `json:"source"`
	Kind   string `json:"kind"`
	// Summary is the contribution summary of the approved manifest (or of
	// the described one when not installed).
	Summary string `json:"summary"`
	// Context is what the same manifest adds to every model request, in
	// tokens ([ManifestCost]).
	Context tokens.Cost `json:"context"`
	// Approval says whether what would run matches what was approved:
	// "approved", "manifest changed — needs approval" (with Pending, the
	// diff), "changed on disk — needs approval", or "not installed".
	Approval string `json:"approval"`
	Pending  string `json:"pending,omitempty"`
	// Health and Warnings are as `ext list` reports them.
	Health   string   `json:"health,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Lock holds the pinned fields of an installed extension.
	Lock   *LockFields            `json:"lock,omitempty"`
	Config []manager.ConfigStatus `json:"config"`
	// Provider is the model provider the extension announced in the
	// harness's live session, after the clamp; nil when it offers none,
	// or is not running there. The approved models and their context
	// windows are in Summary.
	Provider *ProviderEndpoint `json:"provider,omitempty"`
	// Sandbox is what this machine enforces of a native server's OS
	// sandbox with the user's settings, and where its rules come from
	// (see sandbox.go); "" for an extension with no native server.
	Sandbox string `json:"sandbox,omitempty"`
	// Waiting lists the updates still in their cooldown, newest first
	// (from the first-seen record; see cooldown.go).
	Waiting []firstseen.Wait `json:"waiting,omitempty"`
}

// A ProviderEndpoint is where a running extension serves its model
// provider, and which of the approved models it offers.
type ProviderEndpoint struct {
	Name    string   `json:"name"`
	BaseURL string   `json:"base_url"`
	Models  []string `json:"models"`
}

// liveProvider is the provider extension name announced in the live
// session, or nil.
func (h *Harness) liveProvider(name string) *ProviderEndpoint {
	s := h.live.Load()
	if s == nil {
		return nil
	}
	e, ok := s.Extension(name)
	if !ok {
		return nil
	}
	p, ok := e.Provider()
	if !ok {
		return nil
	}
	ep := &ProviderEndpoint{Name: p.Name, BaseURL: p.BaseURL}
	for _, m := range p.Models {
		ep.Models = append(ep.Models, m.ID)
	}
	return ep
}

// LockFields are what extensions.lock pins for an installed extension.
type LockFields struct {
	Commit         string    `json:"commit,omitempty"`
	ContentHash    string    `json:"content_hash"`
	Files          int       `json:"files"`
	CrateChecksum  string    `json:"crate_checksum,omitempty"`
	Registry       string    `json:"registry,omitempty"`
	ArtifactDigest string    `json:"artifact_digest,omitempty"`
	InstalledAt    time.Time `json:"installed_at"`
	// Signer is the pinned key that signed the approved git commit or
	// tag; nil when it was unsigned.
	Signer *packaging.Signer `json:"signer,omitempty"`
	// MinisignKey is the pinned minisign key the prebuilt artifacts were
	// verified with; "" when the crate declares none.
	MinisignKey string `json:"minisign_key,omitempty"`
}

// Info describes arg: an installed extension's name, a package directory,
// an entry of an added marketplace (<plugin>@<marketplace>, staged in a
// temporary directory), or a crate source (crates.io:<crate>, sparse+URL#<crate>, or a bare name
// that is not installed, looked up in registry — "" means the default). A
// crate is downloaded into a temporary directory, verified and read; its
// server is never provisioned and nothing of it runs or is installed.
func (h *Harness) Info(ctx context.Context, arg, registry string) (*Info, error) {
	if IsPackageDir(arg) {
		return h.infoOfDir(ctx, arg)
	}
	if in, err := h.infoOfInstalled(ctx, arg); err == nil || !errors.Is(err, packaging.ErrNotInstalled) {
		return in, err
	}
	if src, ok := h.Marketplaces().Source(ctx, arg); ok {
		return h.infoOfMarketplaceEntry(ctx, src)
	}
	src, err := packaging.ParseSource(arg)
	if err != nil {
		return nil, err
	}
	if src.Kind != packaging.SourceCrate {
		return nil, fmt.Errorf("info %s: not installed; give an installed name, a package directory or a crate (crates.io:<crate>, sparse+URL#<crate>)", arg)
	}
	return h.infoOfCrate(ctx, src, registry)
}

func (h *Harness) infoOfInstalled(ctx context.Context, name string) (*Info, error) {
	lock, err := h.store.ReadLock(ctx)
	if err != nil {
		return nil, err
	}
	e := lock.Entry(name)
	if e == nil {
		return nil, fmt.Errorf("extension %s: %w", name, packaging.ErrNotInstalled)
	}
	approved, err := e.ApprovedManifest()
	if err != nil {
		return nil, err
	}
	in := &Info{
		Name: e.Name, Version: e.Version, Installed: true, Source: e.Source, Kind: string(e.Kind),
		Summary: packaging.Summary(approved), Context: ManifestCost(approved), Approval: "approved", Config: []manager.ConfigStatus{},
		Lock: &LockFields{Commit: e.Commit, ContentHash: e.ContentHash, Files: len(e.Files), CrateChecksum: e.CrateChecksum,
			Registry: e.Registry, ArtifactDigest: e.ArtifactDigest, InstalledAt: e.InstalledAt, Signer: e.Signer,
			MinisignKey: e.MinisignKey},
	}
	list, err := h.mgr.List(ctx)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(list, func(l manager.Info) bool { return l.Name == name }); i >= 0 {
		l := list[i]
		in.Enabled, in.Health, in.Warnings, in.Config = l.Enabled, l.Health, l.Warnings, l.Config
	}
	in.Provider = h.liveProvider(name)
	in.Sandbox = h.sandboxInfo(ctx, approved)
	h.infoWaiting(ctx, e, in)
	if _, err := h.store.VerifyInstalled(ctx, name); err != nil {
		var mc *packaging.ManifestChangedError
		switch {
		case errors.As(err, &mc):
			in.Approval, in.Pending = packaging.ErrManifestChanged.Error(), strings.TrimRight(mc.Change.String(), "\n")
		case errors.Is(err, packaging.ErrTampered):
			in.Approval = "changed on disk — needs approval (yolop ext update " + name + ")"
		default:
			in.Approval = "unusable: " + err.Error()
		}
	}
	return in, nil
}

func (h *Harness) infoOfDir(ctx context.Context, dir string) (*Info, error) {
	m, err := packaging.Load(dir)
	if err != nil {
		return nil, err
	}
	// The same directory installed as a path source: describe the install.
	if lock, err := h.store.ReadLock(ctx); err == nil {
		if e := lock.Entry(m.Name); e != nil && e.Kind == packaging.SourcePath && e.Source == m.Dir {
			return h.infoOfInstalled(ctx, m.Name)
		}
	}
	in := notInstalled(m, m.Dir, packaging.SourcePath)
	in.Provider = h.liveProvider(m.Name) // a package a front-end runs in place
	in.Sandbox = h.sandboxInfo(ctx, m)
	return in, nil
}

func (h *Harness) infoOfCrate(ctx context.Context, src packaging.Source, registry string) (*Info, error) {
	if registry == "" && src.Registry == "" {
		var err error
		if registry, err = h.settings.Registry(ctx); err != nil {
			return nil, err
		}
	}
	if src.Registry == "" {
		src.Registry = registry // so errors and the result name the registry asked
	}
	tmp, err := os.MkdirTemp("", "yolop-info-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	crate := h.crate
	crate.ConfigDir = "" // a look, not an install: no cache or settings written
	// A look records the versions it sees, for the update cooldown (cooldown.go).
	fetchFn, _, err := crate.Open(src, fetch.Request{Registry: registry})
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(tmp, "pkg")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	res, err := fetchFn(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("info %s: %w", src, err)
	}
	m, err := packaging.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("info %s: %w", src, err)
	}
	if res.Registry != "" && src.Registry == "" {
		src.Registry = res.Registry
	}
	in := notInstalled(m, src.String(), packaging.SourceCrate)
	if res.Version != "" {
		in.Version = res.Version
	}
	return in, nil
}

func notInstalled(m *packaging.Manifest, source string, kind packaging.SourceKind) *Info {
	in := &Info{Name: m.Name, Version: m.Version, Source: source, Kind: string(kind), Summary: packaging.Summary(m), Context: ManifestCost(m),
		Approval: "not installed", Warnings: m.Warnings, Config: []manager.ConfigStatus{}}
	if fields, err := m.ConfigFields(); err == nil {
		for _, f := range fields {
			in.Config = append(in.Config, manager.ConfigStatus{Name: f.Name, Type: f.Type, Required: f.Required, Secret: f.Secret})
		}
	}
	return in
}

// Text is the description `yolop ext info` prints: the state, approval,
// source, pinned lock fields, what it adds to every model request,
// health, the endpoint of a running model provider, warnings and config
// fields (never their values), then the contribution summary (which shows
// a providers facet's models and context windows).
func (in *Info) Text() string {
	var b strings.Builder
	state := "not installed"
	if in.Installed {
		state = "installed, disabled"
		if in.Enabled {
			state = "installed, enabled"
		}
	}
	version := in.Version
	if version == "" {
		version = "-"
	}
	fmt.Fprintf(&b, "%s %s — %s\n", in.Name, version, state)
	fmt.Fprintf(&b, "  approval: %s\n", in.Approval)
	if in.Pending != "" {
		b.WriteString("    " + strings.ReplaceAll(in.Pending, "\n", "\n    ") + "\n")
	}
	fmt.Fprintf(&b, "  source:   %s (%s)\n", in.Source, in.Kind)
	if l := in.Lock; l != nil {
		if l.Commit != "" {
			fmt.Fprintf(&b, "  commit:   %s\n", l.Commit)
		}
		if l.Signer != nil {
			fmt.Fprintf(&b, "  signer:   %s (pinned)\n", l.Signer.Describe())
		}
		fmt.Fprintf(&b, "  content:  %s (%d files)\n", l.ContentHash, l.Files)
		if l.Registry != "" {
			fmt.Fprintf(&b, "  registry: %s\n", l.Registry)
		}
		if l.CrateChecksum != "" {
			fmt.Fprintf(&b, "  crate:    sha256 %s\n", l.CrateChecksum)
		}
		if l.ArtifactDigest != "" {
			fmt.Fprintf(&b, "  binary:   sha256 %s (prebuilt)\n", l.ArtifactDigest)
		}
		if l.MinisignKey != "" {
			fmt.Fprintf(&b, "  minisign: key %s (pinned; prebuilt artifacts must be signed by it)\n", packaging.MinisignKeyID(l.MinisignKey))
		}
		fmt.Fprintf(&b, "  approved: %s\n", l.InstalledAt.Format("2006-01-02 15:04:05 MST"))
	}
	fmt.Fprintf(&b, "  context:  %s\n", in.Context)
	if in.Sandbox != "" {
		fmt.Fprintf(&b, "  sandbox:  %s\n", in.Sandbox)
	}
	if in.Health != "" {
		fmt.Fprintf(&b, "  health:   %s\n", in.Health)
	}
	if p := in.Provider; p != nil {
		fmt.Fprintf(&b, "  provider: %s at %s (models %s)\n", p.Name, p.BaseURL, strings.Join(p.Models, ", "))
	}
	for _, w := range in.Waiting {
		fmt.Fprintf(&b, "  cooldown: %s\n", w.Text())
	}
	for _, w := range in.Warnings {
		fmt.Fprintf(&b, "  warning:  %s\n", w)
	}
	if len(in.Config) > 0 {
		var fs []string
		for _, f := range in.Config {
			st := "unset"
			if f.Set {
				st = "set"
			}
			if !in.Installed {
				st = f.Type
			}
			if f.Secret {
				st += ", secret"
			}
			if f.Required {
				st += ", required"
			}
			fs = append(fs, fmt.Sprintf("%s (%s)", f.Name, st))
		}
		fmt.Fprintf(&b, "  config:   %s\n", strings.Join(fs, ", "))
	}
	b.WriteString("\n" + in.Summary)
	return b.String()
}
