package settings

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestMarketplacesRoundTripKeepOtherKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := New(dir)
	if err := os.WriteFile(f.Path(), []byte("[extensions]\nregistry = \"sparse+https://index.example/\"\n\n[[capabilities]]\nref = \"ext:echo\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := Marketplace{Name: "cc", Source: "https://example.com/cc", Ref: "main", Commit: strings.Repeat("a", 40)}
	b := Marketplace{Name: "local", Source: filepath.Join(dir, "m")}
	for _, m := range []Marketplace{a, b} {
		if err := f.PutMarketplace(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	a.Commit = strings.Repeat("b", 40)
	if err := f.PutMarketplace(ctx, a); err != nil { // replaces by name
		t.Fatal(err)
	}
	got, err := f.Marketplaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Marketplace{a, b}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Marketplaces = %+v, want %+v", got, want)
	}
	if reg, _ := f.Registry(ctx); reg != "sparse+https://index.example/" {
		t.Errorf("registry after writes = %q", reg)
	}
	if names, _ := f.Enabled(ctx); !reflect.DeepEqual(names, []string{"echo"}) {
		t.Errorf("enabled after writes = %v", names)
	}
	if ok, err := f.RemoveMarketplace(ctx, "cc"); !ok || err != nil {
		t.Fatalf("RemoveMarketplace(cc) = %v, %v", ok, err)
	}
	if ok, err := f.RemoveMarketplace(ctx, "cc"); ok || err != nil {
		t.Fatalf("second RemoveMarketplace(cc) = %v, %v", ok, err)
	}
	if got, _ := f.Marketplaces(ctx); !reflect.DeepEqual(got, []Marketplace{b}) {
		t.Fatalf("after remove: %+v", got)
	}
}

func TestMalformedMarketplacesAreRefused(t *testing.T) {
	ctx := context.Background()
	for _, body := range []string{
		"marketplaces = \"x\"\n",
		"[[marketplaces]]\nname = \"x\"\n",
		"[[marketplaces]]\nname = \"x\"\nsource = 3\n",
	} {
		dir := t.TempDir()
		f := New(dir)
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Marketplaces(ctx); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err = %v, want ErrMalformed", body, err)
		}
		if err := f.PutMarketplace(ctx, Marketplace{Name: "y", Source: "/y"}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: put err = %v, want ErrMalformed", body, err)
		}
		if b, _ := os.ReadFile(f.Path()); string(b) != body {
			t.Errorf("%q: file changed to %q", body, b)
		}
	}
}
