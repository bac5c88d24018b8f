package fetch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"yolop.dev/registry/cratesio"
)

// crateMinisignKey reads the minisign key the unpacked crate in dir
// declares for its prebuilt artifacts ([package.metadata.yolop]
// minisign_key in Cargo.toml); "" when it declares none or has no
// Cargo.toml. The key is shown at consent and pinned in the lock; the
// artifact is then verified against it.
func crateMinisignKey(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	k, err := cratesio.CrateMinisignKey(b)
	if err != nil {
		return "", fmt.Errorf("the crate's %w", err)
	}
	return k, nil
}
