package firstseen

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"yolop.dev/harness/fetch"
)

func TestObserveKeepsTheFirstTime(t *testing.T) {
	ctx := context.Background()
	s := New(t.TempDir())
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if got, err := s.Seen(ctx, Crate, "k"); err != nil || got != nil {
		t.Fatalf("empty record: %v, %v", got, err)
	}
	if _, err := s.Observe(ctx, Crate, "k", []string{"1.0.0"}, t0); err != nil {
		t.Fatal(err)
	}
	got, err := s.Observe(ctx, Crate, "k", []string{"1.0.0", "1.1.0"}, t0.Add(time.Hour))
	if err != nil || !got["1.0.0"].Equal(t0) || !got["1.1.0"].Equal(t0.Add(time.Hour)) {
		t.Fatalf("second observation: %v, %v", got, err)
	}
	// Another key and kind are separate.
	if got, _ := s.Seen(ctx, Git, "k"); got != nil {
		t.Fatalf("git k: %v", got)
	}
	fi, err := os.Stat(s.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record file: %v, %v", fi, err)
	}
}

func TestCorruptRecordIsAnError(t *testing.T) {
	s := New(t.TempDir())
	for _, body := range []string{"{", `{"version":2,"seen":{}}`, `{"version":1,"seen":{},"extra":1}`} {
		if err := os.WriteFile(s.Path(), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := s.Observe(context.Background(), Crate, "k", []string{"1.0.0"}, time.Now())
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%q: %v", body, err)
		}
		if b, _ := os.ReadFile(s.Path()); string(b) != body {
			t.Fatalf("%q was rewritten to %q", body, b)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	ordered := []string{"0.9.9", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := CompareVersions(ordered[i], ordered[j]); got != want {
				t.Errorf("CompareVersions(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	if CompareVersions("1.0.0+build", "1.0.0") != 0 || CompareVersions("x", "0.0.1") != -1 {
		t.Error("build metadata or an unparsable version")
	}
}

func TestFormatCooldown(t *testing.T) {
	for d, want := range map[time.Duration]string{48 * time.Hour: "48h", 90 * time.Minute: "1h30m", 30 * time.Second: "30s", 0: "0", 2*time.Hour + 5*time.Second: "2h0m5s"} {
		if got := FormatCooldown(d); got != want {
			t.Errorf("FormatCooldown(%v) = %q, want %q", d, got, want)
		}
	}
}

// The gate of a first install records and holds nothing; a pinned git
// commit is not held.
func TestGateRecordsWithoutHolding(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := New(t.TempDir())
	g := &Gate{Store: s, Now: func() time.Time { return now }, Cooldown: 48 * time.Hour}
	if v, err := g.Crate(ctx, "sparse+http://r/", "c", []fetch.CrateVersion{{Version: "1.0.0", Eligible: true}, {Version: "1.1.0", Eligible: true}}); err != nil || v != "" {
		t.Fatalf("install: %q, %v", v, err)
	}
	if got, _ := s.Seen(ctx, Crate, CrateKey("sparse+http://r/", "c")); len(got) != 2 {
		t.Fatalf("recorded %v", got)
	}
	g.Hold, g.Installed = true, "0123456789012345678901234567890123456789"
	pinned := "abcdefabcdefabcdefabcdefabcdefabcdefabcd"
	if c, err := g.Git(ctx, "https://h/r", pinned, pinned); err != nil || c != "" {
		t.Fatalf("pinned: %q, %v", c, err)
	}
	if c, err := g.Git(ctx, "https://h/r", "main", pinned); !errors.Is(err, fetch.ErrHeld) || c != "" {
		t.Fatalf("a branch's new commit: %q, %v", c, err)
	}
}
