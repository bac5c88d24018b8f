package settings

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestUpdateCooldown(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	if d, err := f.UpdateCooldown(ctx, 48*time.Hour); err != nil || d != 48*time.Hour {
		t.Fatalf("no settings file: %v, %v; want the default 48h", d, err)
	}
	for body, want := range map[string]time.Duration{
		"[update]\ncooldown = \"72h\"\n": 72 * time.Hour,
		"[update]\ncooldown = \"0\"\n":   0,
		"[update]\ncooldown = 0\n":       0,
		"[other]\nx = 1\n":               48 * time.Hour,
	} {
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if d, err := f.UpdateCooldown(ctx, 48*time.Hour); err != nil || d != want {
			t.Errorf("%q: %v, %v; want %v", body, d, err, want)
		}
	}
	for _, body := range []string{"[update]\ncooldown = \"soon\"\n", "[update]\ncooldown = \"-1h\"\n"} {
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := f.UpdateCooldown(ctx, time.Hour); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "update.cooldown") || !strings.Contains(err.Error(), f.Path()) {
			t.Errorf("%q: err = %v; want ErrMalformed naming update.cooldown and the file", body, err)
		}
	}
}
