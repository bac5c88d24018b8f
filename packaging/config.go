package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A ConfigField is one top-level property of a config_schema: the unit of the
// setup form and of `list` (set/unset, never a value).
type ConfigField struct {
	Name        string
	Type        string // JSON Schema type; the first one when it is a list
	Description string
	Required    bool
	// Secret is the `secret: true` keyword: stored in the credential store,
	// delivered only as env, never in initialize.config.
	Secret bool
	// Env is the `env: "NAME"` keyword: the value is injected into the
	// server's environment under that name.
	Env     string
	Enum    []string // enum values rendered as strings
	Default any
}

// ConfigFields lists the top-level properties of the config schema, in the
// order they appear in it. Only top-level properties are fields: nested
// objects are one field of type "object" (their secret/env keywords are not
// read). A manifest with no config schema has no fields.
func (m *Manifest) ConfigFields() ([]ConfigField, error) {
	if m.Yolop == nil || len(m.Yolop.ConfigSchema) == 0 {
		return nil, nil
	}
	fs, err := configFields(m.Yolop.ConfigSchema)
	if err != nil {
		return nil, fmt.Errorf("extension %s: config_schema: %w", m.Name, err)
	}
	return fs, nil
}

// ValidateConfig validates a capability config (decoded JSON or TOML: maps,
// slices, strings, numbers, bools) against the config schema. Errors name the
// extension, the field path and the rule.
func (m *Manifest) ValidateConfig(cfg any) error {
	if m.Yolop == nil || len(m.Yolop.ConfigSchema) == 0 {
		return nil
	}
	sch, err := compileConfigSchema(m.Yolop.ConfigSchema)
	if err != nil {
		return fmt.Errorf("extension %s: config_schema: %w", m.Name, err)
	}
	// Round-trip through JSON so TOML types (int64, time) become the
	// instance types the validator expects.
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("extension %s: config is not representable as JSON: %w", m.Name, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("extension %s: config: %w", m.Name, err)
	}
	if err := sch.Validate(inst); err != nil {
		if ve, ok := err.(*jsonschema.ValidationError); ok {
			secret := map[string]bool{}
			if fields, err := configFields(m.Yolop.ConfigSchema); err == nil {
				for _, f := range fields {
					secret[f.Name] = f.Secret
				}
			}
			msg := strings.Join(schemaProblemsRedacting(ve, inst, "", secret), "; ")
			return fmt.Errorf("extension %s: invalid config: %s", m.Name, msg)
		}
		return fmt.Errorf("extension %s: invalid config: %w", m.Name, err)
	}
	return nil
}

const configSchemaURL = "yolop:config_schema.json"

func compileConfigSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	c := newCompiler()
	if err := c.AddResource(configSchemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(configSchemaURL)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %w", err)
	}
	return sch, nil
}

// configFields reads the top-level properties of a schema, keeping their
// order.
func configFields(raw json.RawMessage) ([]ConfigField, error) {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("true")) || bytes.Equal(bytes.TrimSpace(raw), []byte("false")) {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("expected an object schema: %w", err)
	}
	if len(top.Properties) == 0 {
		return nil, nil
	}
	names, err := orderedKeys(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(top.Properties, &props); err != nil {
		return nil, fmt.Errorf("properties: %w", err)
	}
	req := map[string]bool{}
	for _, r := range top.Required {
		req[r] = true
	}
	out := make([]ConfigField, 0, len(names))
	for _, n := range names {
		var p struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
			Secret      bool   `json:"secret"`
			Env         string `json:"env"`
			Enum        []any  `json:"enum"`
			Default     any    `json:"default"`
		}
		if err := json.Unmarshal(props[n], &p); err != nil {
			return nil, fmt.Errorf("properties.%s: %w", n, err)
		}
		f := ConfigField{Name: n, Description: p.Description, Required: req[n], Secret: p.Secret, Env: p.Env, Default: p.Default}
		switch t := p.Type.(type) {
		case string:
			f.Type = t
		case []any:
			if len(t) > 0 {
				f.Type, _ = t[0].(string)
			}
		}
		for _, e := range p.Enum {
			if s, ok := e.(string); ok {
				f.Enum = append(f.Enum, s)
			} else {
				b, _ := json.Marshal(e)
				f.Enum = append(f.Enum, string(b))
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// orderedKeys returns the keys of a JSON object in document order, without
// duplicates.
func orderedKeys(obj json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected an object")
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		if !seen[k] {
			keys = append(keys, k)
			seen[k] = true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil && err != io.EOF {
			return nil, err
		}
	}
	return keys, nil
}

func jsonCompact(dst *bytes.Buffer, src []byte) error { return json.Compact(dst, src) }
