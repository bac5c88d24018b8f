package settings

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestAdvisoriesAllow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := New(dir)
	if got, err := f.AdvisoriesAllow(ctx); err != nil || got != nil {
		t.Fatalf("no file: %v %v", got, err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "settings.toml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("[advisories]\nallow = [\"echo:YOLOP-2026-0001\", \"lsp:RUSTSEC-1\"]\n")
	got, err := f.AdvisoriesAllow(ctx)
	if err != nil || !slices.Equal(got, []string{"echo:YOLOP-2026-0001", "lsp:RUSTSEC-1"}) {
		t.Fatalf("allow = %v, %v", got, err)
	}
	for _, bad := range []string{"[advisories]\nallow = \"echo:X\"\n", "[advisories]\nallow = [\"YOLOP-1\"]\n", "[advisories]\nallow = [1]\n"} {
		write(bad)
		if _, err := f.AdvisoriesAllow(ctx); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}
