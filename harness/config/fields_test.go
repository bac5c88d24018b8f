package config

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestGetSetUnsetField(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if v, set, err := f.r.GetField(ctx, f.m, "greeting"); err != nil || set || v != "hello" {
		t.Fatalf("unset field with a default = %v, %v, %v", v, set, err)
	}
	if v, err := f.r.SetField(ctx, f.m, "count", "3"); err != nil || v != int64(3) {
		t.Fatalf("set count = %v, %v", v, err)
	}
	if _, err := f.r.SetField(ctx, f.m, "restart", "yes"); err != nil {
		t.Fatal(err)
	}
	if v, set, err := f.r.GetField(ctx, f.m, "count"); err != nil || !set || v != int64(3) {
		t.Fatalf("get count = %v, %v, %v", v, set, err)
	}
	before, _ := os.ReadFile(f.set.Path())
	for _, tc := range []struct {
		field, value string
		want         []string
		is           error
	}{
		{"count", "0", []string{"cfgtest.count", "minimum", "settings.toml was not changed"}, nil},
		{"count", "three", []string{"cfgtest.count", `"three" is not an integer`}, nil},
		{"mode", "turbo", []string{"cfgtest.mode", "fast", "slow"}, nil},
		{"token", "tok-x", []string{"is a secret config field", "yolop ext secret set cfgtest token"}, ErrSecretField},
		{"nosuch", "x", []string{`no config field "nosuch"`, "its fields are: count, greeting, mode, restart, token"}, ErrNoField},
	} {
		_, err := f.r.SetField(ctx, f.m, tc.field, tc.value)
		if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("set %s=%s: %v", tc.field, tc.value, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("set %s=%s: %q lacks %q", tc.field, tc.value, err, w)
			}
		}
		if strings.Contains(err.Error(), "tok-x") {
			t.Errorf("the refused secret was echoed: %v", err)
		}
	}
	if after, _ := os.ReadFile(f.set.Path()); string(after) != string(before) {
		t.Fatalf("a refused set changed settings.toml:\n%s\n---\n%s", before, after)
	}
	if _, _, err := f.r.GetField(ctx, f.m, "token"); !errors.Is(err, ErrSecretField) {
		t.Fatalf("get of a secret = %v", err)
	}
	if ok, err := f.r.UnsetField(ctx, f.m, "count"); err != nil || !ok {
		t.Fatalf("unset = %v, %v", ok, err)
	}
	if ok, err := f.r.UnsetField(ctx, f.m, "count"); err != nil || ok {
		t.Fatalf("second unset = %v, %v", ok, err)
	}
}
