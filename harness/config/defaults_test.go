package config

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDefaultsGoToInitializeConfig resolves a schema with defaults of
// several types: an unset plain field is sent with its default, a set one
// with the user's value, and a secret's default is never sent.
func TestDefaultsGoToInitializeConfig(t *testing.T) {
	props := map[string]any{
		"level":   map[string]any{"type": "integer", "default": 3},
		"verbose": map[string]any{"type": "boolean", "default": false},
		"limits":  map[string]any{"type": "object", "default": map[string]any{"max": 10}},
		"style":   map[string]any{"type": "string", "enum": []string{"plain", "shout"}, "default": "plain"},
		"nodflt":  map[string]any{"type": "string"},
		"key":     map[string]any{"type": "string", "secret": true, "env": "DFLT_KEY", "default": "key-default-never-sent"},
	}
	_, m := writePackage(t, "dflt", props, nil)
	f := newFixture(t)
	ctx := context.Background()
	if err := f.set.SetCapabilityConfig(ctx, "dflt", map[string]any{"style": "shout"}); err != nil {
		t.Fatal(err)
	}
	res, err := f.r.Resolve(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(res.Config, &cfg); err != nil {
		t.Fatalf("initialize.config %q: %v", res.Config, err)
	}
	want := map[string]any{"level": float64(3), "verbose": false, "limits": map[string]any{"max": float64(10)}, "style": "shout"}
	if d := cmp.Diff(want, cfg); d != "" {
		t.Errorf("initialize.config (-want +got):\n%s", d)
	}
	// A default is not a value the user set.
	if d := cmp.Diff(map[string]bool{"level": false, "verbose": false, "limits": false, "style": true, "nodflt": false, "key": false}, res.Set); d != "" {
		t.Errorf("set (-want +got):\n%s", d)
	}
	if _, ok := res.Env["DFLT_KEY"]; ok {
		t.Errorf("a secret's schema default reached the environment: %v", res.Env)
	}
}
