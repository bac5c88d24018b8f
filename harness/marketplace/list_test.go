package marketplace

import (
	"errors"
	"strings"
	"testing"

	"yolop.dev/harness/settings"
)

// TestRowsAndTable: a readable marketplace lists its plugins, an unreadable
// one its error, and the table shortens the commit and joins ref and source.
func TestRowsAndTable(t *testing.T) {
	ok := Marketplace{Marketplace: settings.Marketplace{Name: "cc", Source: "github:o/r", Ref: "main", Commit: "0123456789abcdef0123"},
		Catalog: &Catalog{Plugins: []Entry{{Name: "a"}, {Name: "b"}}}}
	bad := Marketplace{Marketplace: settings.Marketplace{Name: "gone", Source: "/nowhere"}, Err: errors.New("no catalog")}
	rows := Rows([]Marketplace{ok, bad})
	if len(rows) != 2 || strings.Join(rows[0].Plugins, ",") != "a,b" || rows[1].Error != "no catalog" || rows[1].Plugins == nil {
		t.Fatalf("rows = %+v", rows)
	}
	if r := Rows(nil); r == nil || len(r) != 0 {
		t.Fatalf("Rows(nil) = %#v, want an empty, non-nil list", r)
	}
	var b strings.Builder
	if err := WriteTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MARKETPLACE", "github:o/r@main (commit 0123456789ab)", "a, b", "gone", "error: no catalog"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
