//go:build !yep_unstable

package yep

import (
	"reflect"
	"testing"

	"yolop.dev/core/internal/json"
)

// TestStableIgnoresStagedFields: without the yep_unstable tag the staged
// structure is not on the wire: the embedded struct has no fields, encodes
// nothing, and a message from a peer built with the tag decodes with its
// staged field ignored like any unknown field.
func TestStableIgnoresStagedFields(t *testing.T) {
	if Unstable {
		t.Fatal("Unstable is true in a stable build")
	}
	if n := reflect.TypeFor[StatusChangedUnstable]().NumField(); n != 0 {
		t.Fatalf("StatusChangedUnstable has %d fields in a stable build, want 0", n)
	}
	b, err := json.Marshal(StatusChangedParams{Text: "degraded: gopls not found"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"text":"degraded: gopls not found"}`; string(b) != want {
		t.Fatalf("encoded %s, want %s", b, want)
	}
	var p StatusChangedParams
	if err := json.Unmarshal([]byte(`{"text":"degraded: gopls not found","degraded":true}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Text != "degraded: gopls not found" {
		t.Fatalf("decoded %+v", p)
	}
}
