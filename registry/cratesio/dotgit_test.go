package cratesio

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// A .crate holding a .git entry anywhere is refused, as the git exporter
// refuses one: files under .git would be installed but run unnoticed.
func TestUnpackRefusesDotGit(t *testing.T) {
	for _, name := range []string{"bin/.git/real.py", ".git/config", "src/.GIT/x", "bin/.git"} {
		t.Run(name, func(t *testing.T) {
			archive := gz(t, rawTar(t, []tarEntry{file(pfx+"Cargo.toml", "[package]\n"), file(pfx+name, "print('hi')\n")}))
			out, before, err := unpackIn(t, archive, UnpackOptions{})
			if !errors.Is(err, ErrUnsafeArchive) {
				t.Fatalf("err = %v, want ErrUnsafeArchive", err)
			}
			if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), ".git") {
				t.Errorf("error %q does not name the entry and say why", err)
			}
			assertUnchanged(t, filepath.Dir(out), before)
		})
	}
}
