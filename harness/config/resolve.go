package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/host"
	"yolop.dev/harness/secrets"
	"yolop.dev/packaging"
	"yolop.dev/packaging/hostgrant"
)

// A SettingsStore holds capability configs: the `config` table of each
// [[capabilities]] ref = "ext:<name>" entry in settings.toml. The settings
// package's File implements it.
type SettingsStore interface {
	// CapabilityConfig returns an extension's config table, or nil.
	CapabilityConfig(ctx context.Context, name string) (map[string]any, error)
	// SetCapabilityConfig replaces an extension's config table; an empty
	// one removes it.
	SetCapabilityConfig(ctx context.Context, name string, cfg map[string]any) error
	// UpdateCapabilityConfig replaces an extension's config table with
	// what fn makes of the current one, reading and writing under one
	// exclusive lock so that concurrent updates are never lost. When fn
	// fails nothing is written.
	UpdateCapabilityConfig(ctx context.Context, name string, fn func(cfg map[string]any) (map[string]any, error)) error
}

// A Resolver combines a manifest, the settings and the credential store into
// what a server is started with. Settings and Secrets are required.
type Resolver struct {
	Settings SettingsStore
	Secrets  secrets.Store
	// SettingsPath names settings.toml in messages. Empty means
	// "settings.toml".
	SettingsPath string
	// LookupEnv reads the host environment for ${VAR} expansion in the
	// server spec. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Logger receives what Push could not apply. Nil means no logging;
	// everything else is returned as warnings or errors.
	Logger hclog.Logger
	// Kinds decide how Setup asks for each field. Nil means DefaultKinds().
	Kinds Kinds
}

// Resolved is one extension's config, split and checked.
type Resolved struct {
	// Fields are the manifest's config fields, in schema order.
	Fields []packaging.ConfigField
	// Config is the non-secret capability config for initialize.config and
	// config/changed: the values in settings.toml, plus the schema default
	// of every plain field left unset; nil when there is none. A secret
	// field's default is never sent.
	Config json.RawMessage
	// Env is what config adds to the server's environment: every secret
	// field and every field declaring `env`.
	Env map[string]string
	// Set says, per field, whether a value is configured (a plain value in
	// settings.toml or a secret in the credential store). Never a value.
	Set map[string]bool
	// Missing are the required fields that are unset and have no default.
	Missing []packaging.ConfigField
	// Warnings are problems that did not stop resolution (a secret found in
	// settings.toml and ignored, a secret field with no `env`).
	Warnings []string
}

// ErrInvalidConfig is wrapped by config that fails its schema.
var ErrInvalidConfig = errors.New("invalid config")

// A MissingError lists the required fields of an extension that are not
// set, and how to set each.
type MissingError struct {
	Ext          string
	Fields       []packaging.ConfigField
	SettingsPath string
}

func (e *MissingError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "extension %s needs %d config field(s) set before it can run:", e.Ext, len(e.Fields))
	for _, f := range e.Fields {
		b.WriteString("\n  " + HowToSet(e.Ext, f, e.SettingsPath))
	}
	b.WriteString("\nor enable it from a terminal or a session, where yolop asks for each one")
	return b.String()
}

// HowToSet says how a person sets field f of ext by hand.
func HowToSet(ext string, f packaging.ConfigField, settingsPath string) string {
	if settingsPath == "" {
		settingsPath = "settings.toml"
	}
	desc := ""
	if f.Description != "" {
		desc = " — " + f.Description
	}
	if f.Secret {
		return fmt.Sprintf("%s (secret%s): yolop ext secret set %s %s", f.Name, desc, ext, f.Name)
	}
	what := f.Type
	if len(f.Enum) > 0 {
		what = "one of " + strings.Join(f.Enum, ", ")
	}
	if what == "" {
		what = "value"
	}
	return fmt.Sprintf("%s (%s%s): add %s = <value> to the config table of the [[capabilities]] entry ref = \"ext:%s\" in %s", f.Name, what, desc, f.Name, ext, settingsPath)
}

func (r *Resolver) settingsPath() string {
	if r.SettingsPath == "" {
		return "settings.toml"
	}
	return r.SettingsPath
}

// Inspect reads an extension's config and secrets and splits them, without
// validating: what `list` shows. Secret values found in settings.toml are
// dropped with a warning.
func (r *Resolver) Inspect(ctx context.Context, m *packaging.Manifest) (*Resolved, error) {
	fields, err := m.ConfigFields()
	if err != nil {
		return nil, err
	}
	raw, err := r.Settings.CapabilityConfig(ctx, m.Name)
	if err != nil {
		return nil, fmt.Errorf("extension %s: reading its config: %w", m.Name, err)
	}
	sec, err := r.Secrets.Extension(ctx, m.Name)
	if err != nil {
		return nil, fmt.Errorf("extension %s: reading its secrets: %w", m.Name, err)
	}
	res := &Resolved{Fields: fields, Set: map[string]bool{}, Env: map[string]string{}}
	secret := map[string]bool{}
	for _, f := range fields {
		secret[f.Name] = f.Secret
	}
	plain := map[string]any{}
	sent := map[string]any{} // plain plus the defaults of unset plain fields
	for _, k := range sortedKeys(raw) {
		if secret[k] {
			res.Warnings = append(res.Warnings, fmt.Sprintf("extension %s: field %q is a secret, so its value in %s is ignored and never sent; remove it from there and store it with `yolop ext secret set %s %s`", m.Name, k, r.settingsPath(), m.Name, k))
			continue
		}
		plain[k] = raw[k]
		sent[k] = raw[k]
	}
	for _, f := range fields {
		if f.Secret {
			v, ok := sec[f.Name]
			res.Set[f.Name] = ok && !v.IsZero()
			if !res.Set[f.Name] {
				continue
			}
			if f.Env == "" {
				res.Warnings = append(res.Warnings, fmt.Sprintf("extension %s: secret field %q declares no `env`, so the server cannot receive it (secrets are delivered only as environment variables); the extension's config_schema should name one", m.Name, f.Name))
				continue
			}
			res.Env[f.Env] = v.Reveal()
			continue
		}
		v, ok := plain[f.Name]
		res.Set[f.Name] = ok
		if !ok && f.Default != nil {
			// The schema's default is what the server runs with: it is
			// sent in initialize.config like a value the user set.
			v = f.Default
			sent[f.Name] = v
		}
		if f.Env != "" && v != nil {
			res.Env[f.Env] = envValue(v)
		}
	}
	for _, f := range fields {
		if f.Required && !res.Set[f.Name] && f.Default == nil {
			res.Missing = append(res.Missing, f)
		}
	}
	if len(sent) > 0 {
		b, err := json.Marshal(sent)
		if err != nil {
			return nil, fmt.Errorf("extension %s: its config in %s is not representable as JSON: %w", m.Name, r.settingsPath(), err)
		}
		res.Config = b
	}
	if len(res.Env) == 0 {
		res.Env = nil
	}
	return res, nil
}

// Resolve is Inspect plus the checks that keep an extension off: a required
// field unset ([MissingError]) or a config that fails the schema
// ([ErrInvalidConfig], naming the extension, the field path and the rule).
func (r *Resolver) Resolve(ctx context.Context, m *packaging.Manifest) (*Resolved, error) {
	res, err := r.Inspect(ctx, m)
	if err != nil {
		return nil, err
	}
	if len(res.Missing) > 0 {
		return res, &MissingError{Ext: m.Name, Fields: res.Missing, SettingsPath: r.SettingsPath}
	}
	if err := r.validate(ctx, m, res); err != nil {
		return res, err
	}
	return res, nil
}

// validate checks plain config plus secrets against the schema. A message
// never carries a secret value: it is scrubbed with the secret's label.
func (r *Resolver) validate(ctx context.Context, m *packaging.Manifest, res *Resolved) error {
	inst := map[string]any{}
	if len(res.Config) > 0 {
		if err := json.Unmarshal(res.Config, &inst); err != nil {
			return fmt.Errorf("extension %s: %w", m.Name, err)
		}
	}
	sec, err := r.Secrets.Extension(ctx, m.Name)
	if err != nil {
		return err
	}
	scrub := NewScrubber()
	for _, f := range res.Fields {
		if v, ok := sec[f.Name]; ok && f.Secret {
			inst[f.Name] = v.Reveal()
			scrub.Add(m.Name, f.Name, v)
		}
	}
	if err := m.ValidateConfig(inst); err != nil {
		return fmt.Errorf("%w: %s; the extension stays off until the config table of ext:%s in %s is fixed", ErrInvalidConfig, scrub.Scrub(err.Error()), m.Name, r.settingsPath())
	}
	return nil
}

// FieldStatus reports, for `list`, whether each config field of an
// extension is set. It never returns a value.
func (r *Resolver) FieldStatus(ctx context.Context, m *packaging.Manifest) (map[string]bool, error) {
	res, err := r.Inspect(ctx, m)
	if err != nil {
		return nil, err
	}
	return res.Set, nil
}

// Grant builds the grant a session runs the extension with: the manifest's
// static grant, its server args and env with ${VAR} expanded from the host
// environment, the validated non-secret config, and the config env (secrets
// included) added to the server's environment — that extension's server
// only. It returns the resolution's warnings with the expansion warnings.
func (r *Resolver) Grant(ctx context.Context, m *packaging.Manifest) (host.Grant, []string, error) {
	res, err := r.Resolve(ctx, m)
	if err != nil {
		return host.Grant{}, nil, err
	}
	g, warns, err := buildGrant(m, res.Config, res.Env, res.Warnings, r.lookupEnv())
	if err == nil {
		err = r.ApplyUserSettings(ctx, m, &g)
	}
	if err != nil {
		return host.Grant{}, nil, err
	}
	return g, warns, nil
}

// ApplyUserSettings applies what the user's settings say about every
// grant of m, whether installed or loaded in place: the [sandbox] table
// (an override, refuse_unsandboxed) and the [hooks] on_error policy.
func (r *Resolver) ApplyUserSettings(ctx context.Context, m *packaging.Manifest, g *host.Grant) error {
	if err := r.applySandboxSettings(ctx, m, &g.Server); err != nil {
		return err
	}
	return r.applyHookSettings(ctx, m, g)
}

// GrantInPlace builds the grant of a package loaded in place for the
// author's dev loop (`yolop session --ext DIR`): nothing was approved or
// configured, so it is the manifest's static grant with ${VAR} expanded
// from the host environment, no config and no secrets.
func GrantInPlace(m *packaging.Manifest) (host.Grant, []string, error) {
	return buildGrant(m, nil, nil, nil, os.LookupEnv)
}

// buildGrant is the one place a manifest becomes a grant: the static grant
// (packaging/hostgrant), its server args and env with ${VAR} expanded from
// lookup, the validated non-secret config, and env (secrets included)
// added to the server's environment last, never expanded.
func buildGrant(m *packaging.Manifest, cfg json.RawMessage, env map[string]string, warns []string, lookup func(string) (string, bool)) (host.Grant, []string, error) {
	g, err := hostgrant.FromManifest(m)
	if err != nil {
		return host.Grant{}, nil, err
	}
	warnings := append([]string(nil), warns...)
	warnings = append(warnings, ExpandServer(m.Name, &g.Server, lookup)...)
	g.Config = cfg
	if len(env) > 0 && g.Server.Env == nil {
		g.Server.Env = map[string]string{}
	}
	maps.Copy(g.Server.Env, env)
	return g, warnings, nil
}

// ExpandServer expands ${VAR} (and ${VAR:-default}) in spec's Args and Env
// values from lookup; see [hostgrant.ExpandServer].
func ExpandServer(ext string, spec *core.ServerSpec, lookup func(string) (string, bool)) []string {
	return hostgrant.ExpandServer(ext, spec, lookup)
}

func (r *Resolver) lookupEnv() func(string) (string, bool) {
	if r.LookupEnv != nil {
		return r.LookupEnv
	}
	return os.LookupEnv
}

func (r *Resolver) logger() hclog.Logger {
	if r.Logger == nil {
		return hclog.NewNullLogger()
	}
	return r.Logger
}

// envValue renders a config value as an environment string: strings as
// they are, everything else as JSON.
func envValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckSecret validates one secret value against its field's schema (a
// pattern, a length). The message names the field and the rule, never the
// value.
func CheckSecret(m *packaging.Manifest, field string, v secrets.Secret) error {
	if err := validateField(m, field, v.Reveal()); err != nil {
		s := NewScrubber()
		s.Add(m.Name, field, v)
		return fmt.Errorf("extension %s: the secret does not fit its config_schema: %s; nothing was saved", m.Name, s.Scrub(err.Error()))
	}
	return nil
}
