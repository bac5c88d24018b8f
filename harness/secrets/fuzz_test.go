package secrets

import (
	"context"
	"errors"
	"os"
	"testing"
)

// FuzzFileRead reads arbitrary bytes as connections.toml: the result is a
// store or ErrCorrupt — never a panic, never a silent empty store from
// bytes that do not parse.
func FuzzFileRead(f *testing.F) {
	for _, s := range []string{
		"", "# only a comment\n", "['ext:a']\nt = 'v'\n", "[\"ext:a\"]\nt = \"v\"\n", "['ext:a'\n", "t = 'v'\n",
		"['ext:a']\nt = 1\n", "['ext:a']\nt = 'v'\n['ext:a']\nt = 'w'\n", "['other']\nk = 'v'\n", "\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		fl := NewFile(dir)
		if err := os.WriteFile(fl.Path(), data, 0o600); err != nil {
			t.Fatal(err)
		}
		all, err := fl.All(context.Background())
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error is not ErrCorrupt: %v", err)
			}
			return
		}
		for ext, fields := range all {
			for k, v := range fields {
				if ext == "" && k == "" && v.IsZero() {
					t.Fatal("impossible entry")
				}
			}
		}
	})
}
