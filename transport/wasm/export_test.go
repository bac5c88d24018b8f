package wasm

import (
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
)

// ResealForTest rewrites the sums of every entry under cacheDir with key,
// as if the files there now were what the transport had written: a way to
// plant an entry that passes the check but that wazero cannot load.
func ResealForTest(cacheDir string, key []byte) error {
	d := &diskCache{dir: cacheDir, key: key, log: hclog.NewNullLogger()}
	list, err := os.ReadDir(cacheDir)
	if err != nil {
		return err
	}
	for _, de := range list {
		if !de.IsDir() {
			continue
		}
		e := &entry{c: d, dir: filepath.Join(cacheDir, de.Name())}
		if err := e.seal(); err != nil {
			return err
		}
	}
	return nil
}

// NewUnguardedForTest returns a Transport whose modules are compiled
// without the CPU guard (wazero's close-on-context-done checks), so that a
// benchmark can measure what the guard costs. A guest of it that loops
// cannot be stopped.
func NewUnguardedForTest(opts Options) *Transport {
	t := New(opts)
	t.unguarded = true
	return t
}
