//go:build yep_unstable

package yep

import (
	"testing"

	"yolop.dev/core/internal/json"
)

// TestStagedStatusDegraded: with the yep_unstable tag, status/changed
// carries the staged degraded flag both ways, through core's decoder.
func TestStagedStatusDegraded(t *testing.T) {
	if !Unstable {
		t.Fatal("Unstable is false in a yep_unstable build")
	}
	b, err := json.Marshal(StatusChangedParams{Text: "degraded: gopls not found", StatusChangedUnstable: StatusChangedUnstable{Degraded: true}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"text":"degraded: gopls not found","degraded":true}`; string(b) != want {
		t.Fatalf("encoded %s, want %s", b, want)
	}
	var p StatusChangedParams
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if !p.Degraded || p.Text != "degraded: gopls not found" {
		t.Fatalf("decoded %+v", p)
	}
	// Missing means false, and it is omitted when false.
	b, err = json.Marshal(StatusChangedParams{Text: "ok"})
	if err != nil || string(b) != `{"text":"ok"}` {
		t.Fatalf("encoded %s (%v), want only text", b, err)
	}
}
