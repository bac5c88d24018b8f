package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"yolop.dev/packaging"
)

// ErrSecretField is wrapped by [Resolver.SetField] and [Resolver.GetField]
// for a field marked secret: such a value lives in the credential store,
// never in settings.toml, and is never shown.
var ErrSecretField = errors.New("a secret config field")

// ErrNoField is wrapped when a manifest declares no config field of the
// name asked for.
var ErrNoField = errors.New("no such config field")

// field returns m's declared config field name, or an error listing the
// fields there are.
func field(m *packaging.Manifest, name string) (packaging.ConfigField, error) {
	fields, err := m.ConfigFields()
	if err != nil {
		return packaging.ConfigField{}, err
	}
	var names []string
	for _, f := range fields {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return packaging.ConfigField{}, fmt.Errorf("extension %s declares no config fields: %w", m.Name, ErrNoField)
	}
	return packaging.ConfigField{}, fmt.Errorf("extension %s has no config field %q (%w); its fields are: %s", m.Name, name, ErrNoField, strings.Join(names, ", "))
}

func refuseSecret(m *packaging.Manifest, f packaging.ConfigField) error {
	if f.Secret {
		return fmt.Errorf("%s.%s is %w: it is stored with `yolop ext secret set %s %s` (typed with input hidden), never in settings.toml", m.Name, f.Name, ErrSecretField, m.Name, f.Name)
	}
	return nil
}

// GetField returns the value of a plain config field as settings.toml
// holds it (set reports whether it is set there; an unset field's default
// is returned with set false). A secret field is refused.
func (r *Resolver) GetField(ctx context.Context, m *packaging.Manifest, name string) (value any, set bool, err error) {
	f, err := field(m, name)
	if err != nil {
		return nil, false, err
	}
	if err := refuseSecret(m, f); err != nil {
		return nil, false, err
	}
	cfg, err := r.Settings.CapabilityConfig(ctx, m.Name)
	if err != nil {
		return nil, false, err
	}
	if v, ok := cfg[name]; ok {
		return v, true, nil
	}
	return f.Default, false, nil
}

// A FieldValue is one config field as `yolop ext config get` shows it.
type FieldValue struct {
	Field packaging.ConfigField
	// Value is the field's value in settings.toml or, when Set is false,
	// its schema default (nil when it has none). Always nil for a secret.
	Value any
	// Set reports whether settings.toml holds a value for the field.
	// Always false for a secret, whose value is never read here.
	Set bool
}

// Values returns every config field of m in schema order with its value
// in settings.toml, or its default when unset. Secret fields are listed
// without a value.
func (r *Resolver) Values(ctx context.Context, m *packaging.Manifest) ([]FieldValue, error) {
	fields, err := m.ConfigFields()
	if err != nil {
		return nil, err
	}
	cfg, err := r.Settings.CapabilityConfig(ctx, m.Name)
	if err != nil {
		return nil, fmt.Errorf("extension %s: reading its config: %w", m.Name, err)
	}
	out := make([]FieldValue, 0, len(fields))
	for _, f := range fields {
		fv := FieldValue{Field: f}
		if !f.Secret {
			fv.Value, fv.Set = cfg[f.Name]
			if !fv.Set {
				fv.Value = f.Default
			}
		}
		out = append(out, fv)
	}
	return out, nil
}

// SetField parses text by the field's type (integer, number, boolean,
// JSON for an object or array, else the text), validates the whole config
// with it against config_schema, and writes it to settings.toml. Nothing is
// written when anything fails; the error names the field path and the
// rule. A secret field is refused.
func (r *Resolver) SetField(ctx context.Context, m *packaging.Manifest, name, text string) (any, error) {
	f, err := field(m, name)
	if err != nil {
		return nil, err
	}
	if err := refuseSecret(m, f); err != nil {
		return nil, err
	}
	v, err := r.kinds().For(f).Parse(f, text)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %v", m.Name, name, err)
	}
	if err := validateField(m, name, v); err != nil {
		return nil, fmt.Errorf("%s.%s: %v; settings.toml was not changed", m.Name, name, err)
	}
	err = r.Settings.UpdateCapabilityConfig(ctx, m.Name, func(cfg map[string]any) (map[string]any, error) {
		if cfg == nil {
			cfg = map[string]any{}
		}
		cfg[name] = v
		return cfg, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", m.Name, name, err)
	}
	return v, nil
}

// errUnchanged stops an update that has nothing to write.
var errUnchanged = errors.New("unchanged")

// UnsetField removes a plain config field from settings.toml, reporting
// whether it was set. A secret field is refused.
func (r *Resolver) UnsetField(ctx context.Context, m *packaging.Manifest, name string) (bool, error) {
	f, err := field(m, name)
	if err != nil {
		return false, err
	}
	if err := refuseSecret(m, f); err != nil {
		return false, err
	}
	err = r.Settings.UpdateCapabilityConfig(ctx, m.Name, func(cfg map[string]any) (map[string]any, error) {
		if _, ok := cfg[name]; !ok {
			return nil, errUnchanged
		}
		delete(cfg, name)
		return cfg, nil
	})
	switch {
	case errors.Is(err, errUnchanged):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%s.%s: %w", m.Name, name, err)
	}
	return true, nil
}

// FormatValue renders a config value for a person: strings as they are,
// everything else as JSON.
func FormatValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// kinds is r.Kinds, or DefaultKinds.
func (r *Resolver) kinds() Kinds {
	if r.Kinds == nil {
		return DefaultKinds()
	}
	return r.Kinds
}
