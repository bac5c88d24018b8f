package secrets

import (
	"path/filepath"
	"testing"

	"github.com/gofrs/flock"
)

// lockFor takes the credential lock of dir and returns its release.
func lockFor(t *testing.T, dir string) func() {
	t.Helper()
	fl := flock.New(filepath.Join(dir, LockName))
	if err := fl.Lock(); err != nil {
		t.Fatal(err)
	}
	return func() { fl.Unlock() }
}
