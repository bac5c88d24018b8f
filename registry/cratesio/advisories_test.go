package cratesio

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdvisoryAffects(t *testing.T) {
	a := Advisory{ID: "YOLOP-2026-0001", Crate: "yolop-extension-echo", Versions: "<1.2.0", Severity: SeverityCritical, Description: "x"}
	for v, want := range map[string]bool{"1.1.9": true, "0.1.0": true, "1.2.0": false, "1.3.0": false, "1.1.0-rc.1": true, "garbage": true} {
		if got := a.Affects(v); got != want {
			t.Errorf("Affects(%q) = %v, want %v", v, got, want)
		}
	}
	b := a
	b.Versions = ">=1.0.0, <1.1.3"
	if b.Affects("0.9.0") || !b.Affects("1.1.2") || b.Affects("1.1.3") {
		t.Errorf("range %q misjudged", b.Versions)
	}
}

func TestAdvisoryValidate(t *testing.T) {
	ok := Advisory{ID: "YOLOP-2026-0001", Crate: "yolop-extension-echo", Versions: "<1.2.0", Severity: SeverityHigh, Description: "bad"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Advisory){
		"id":       func(a *Advisory) { a.ID = "../x" },
		"crate":    func(a *Advisory) { a.Crate = "no/such" },
		"versions": func(a *Advisory) { a.Versions = "<<1" },
		"severity": func(a *Advisory) { a.Severity = "urgent" },
		"desc":     func(a *Advisory) { a.Description = " " },
	} {
		a := ok
		mut(&a)
		if err := a.Validate(); err == nil {
			t.Errorf("%s: invalid advisory accepted: %+v", name, a)
		}
	}
}

// An advisory written into a static index with WriteAdvisory is served
// beside the index and read back by the client; a crate without
// advisories has none (404 is not an error); a second advisory with the
// same id replaces the first.
func TestAdvisoriesThroughAStaticIndex(t *testing.T) {
	idx := t.TempDir()
	publishCrate(t, idx, "yolop-extension-echo", "0.1.0", echoFiles("0.1.0"))
	a := Advisory{ID: "YOLOP-2026-0001", Crate: "yolop-extension-echo", Versions: "<0.2.0", Severity: SeverityCritical, Description: "steals keys", URL: "https://example.com/a"}
	p, err := WriteAdvisory(idx, a)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(idx, "advisories", "yolop-extension-echo.json"); p != want {
		t.Fatalf("wrote %s, want %s", p, want)
	}
	a2 := a
	a2.Severity, a2.Description = SeverityLow, "only logs too much"
	if _, err := WriteAdvisory(idx, Advisory{ID: "YOLOP-2026-0002", Crate: a.Crate, Versions: "*", Severity: SeverityMedium, Description: "m"}); err != nil {
		t.Fatal(err)
	}
	reg, srv := serve(t, ServeIndex(idx))
	opts := fastOptions(reg)
	opts.CacheDir = t.TempDir()
	c := NewClient(opts)
	got, err := c.Advisories(context.Background(), "yolop-extension-echo")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != a || got[1].ID != "YOLOP-2026-0002" {
		t.Fatalf("advisories = %+v", got)
	}
	if !got[0].Critical() || !got[0].Affects("0.1.0") || got[0].Affects("0.2.0") {
		t.Errorf("advisory misjudged: %+v", got[0])
	}
	if _, err := WriteAdvisory(idx, a2); err != nil {
		t.Fatal(err)
	}
	got, err = NewClient(opts).Advisories(context.Background(), "yolop-extension-echo")
	if err != nil || len(got) != 2 || got[0] != a2 {
		t.Fatalf("after replacing: %+v, %v", got, err)
	}
	none, err := c.Advisories(context.Background(), "yolop-extension-other")
	if err != nil || none != nil {
		t.Fatalf("a crate without advisories: %+v, %v", none, err)
	}
	// Offline: the cached copy is returned with the error.
	srv.Close()
	opts.Retries = -1
	got, err = NewClient(opts).Advisories(context.Background(), "yolop-extension-echo")
	if err == nil || !strings.Contains(err.Error(), "using the copy cached") || len(got) != 2 || got[0] != a2 {
		t.Fatalf("offline: %+v, %v", got, err)
	}
}

func TestWriteAdvisoryRefusesANonIndexAndBadInput(t *testing.T) {
	a := Advisory{ID: "YOLOP-2026-0001", Crate: "yolop-extension-echo", Versions: "<1", Severity: SeverityCritical, Description: "d"}
	dir := t.TempDir()
	if _, err := WriteAdvisory(dir, a); err == nil || !strings.Contains(err.Error(), "not a static index") {
		t.Fatalf("no config.json: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"dl":"crates"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Severity = "bad"
	if _, err := WriteAdvisory(dir, a); err == nil {
		t.Fatal("bad severity accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "advisories")); err == nil {
		t.Fatal("a refused advisory wrote something")
	}
}

// A malformed advisories file is an error the caller can warn about, not
// an empty list.
func TestMalformedAdvisoriesAreAnError(t *testing.T) {
	idx := t.TempDir()
	publishCrate(t, idx, "yolop-extension-echo", "0.1.0", echoFiles("0.1.0"))
	if err := os.MkdirAll(filepath.Join(idx, "advisories"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(idx, "advisories", "yolop-extension-echo.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, _ := serve(t, ServeIndex(idx))
	if _, err := NewClient(fastOptions(reg)).Advisories(context.Background(), "yolop-extension-echo"); err == nil {
		t.Fatal("malformed advisories accepted")
	}
}
