package wasm

import (
	"github.com/hashicorp/go-hclog"
)

// DefaultMaxMemoryMB is the memory cap of an instance when
// [Options].MaxMemoryMB is zero.
const DefaultMaxMemoryMB = 256

// Options configure a [Transport]. Every field's zero value is a sensible
// default, and the zero value is the sandbox: no files, no network, no host
// environment, 256 MiB of memory.
type Options struct {
	// Logger receives each guest's stderr lines, through a sub-logger
	// named after the extension, and the transport's own diagnostics (a
	// compile cache entry discarded, a cache directory not used). Nil
	// means hclog.NewNullLogger().
	Logger hclog.Logger
	// StderrLevel is the level stderr lines are logged at. Zero
	// (hclog.NoLevel) means hclog.Info.
	StderrLevel hclog.Level
	// StderrLines is how many of the last stderr lines an instance keeps
	// for StderrTail and its exit error. Zero means 50; negative keeps
	// none.
	StderrLines int
	// StderrLineBytes caps one stderr line: the rest is discarded as it is
	// read and replaced by a note of its size. Zero means 4096.
	StderrLineBytes int
	// StderrRate is how many stderr lines per second are logged in the
	// long run; lines over the rate are counted and kept in the tail but
	// not logged. Zero means 20.
	StderrRate float64
	// StderrBurst is how many stderr lines may be logged at once before
	// StderrRate applies. Zero means 100.
	StderrBurst int

	// CacheDir is the directory of the persisted compile cache: a module
	// compiled once is loaded from there by later Transports and
	// processes. It is created (mode 0700) if missing. Empty means no
	// persisted cache: every Transport compiles each module once, in
	// memory. A directory that cannot be used (not creatable, or writable
	// by other users) is logged and ignored, never fatal.
	CacheDir string
	// CacheKey authenticates the entries of CacheDir (HMAC-SHA256): an
	// entry that does not verify is discarded and rebuilt. Nil means a
	// random key kept in CacheDir/key, which catches corrupt entries and
	// entries not written by a holder of that file; a key kept elsewhere
	// (the host's config directory) also catches a cache directory
	// replaced as a whole, such as one restored from a shared CI cache.
	CacheKey []byte

	// MaxMemoryMB caps each instance's linear memory, in MiB: a grow past
	// it fails inside the guest (which sees it as out of memory) and the
	// instance's error names the cap. Zero means [DefaultMaxMemoryMB];
	// values above 4096 (the 32-bit address space) mean 4096.
	MaxMemoryMB int
	// FS lists the host directories a guest may see. Nil means none: the
	// guest has no file system at all.
	FS []Mount
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.StderrLevel == hclog.NoLevel {
		o.StderrLevel = hclog.Info
	}
	if o.StderrLines == 0 {
		o.StderrLines = 50
	}
	if o.StderrLineBytes <= 0 {
		o.StderrLineBytes = 4096
	}
	if o.StderrRate <= 0 {
		o.StderrRate = 20
	}
	if o.StderrBurst <= 0 {
		o.StderrBurst = 100
	}
	if o.MaxMemoryMB <= 0 {
		o.MaxMemoryMB = DefaultMaxMemoryMB
	}
	if o.MaxMemoryMB > 4096 {
		o.MaxMemoryMB = 4096
	}
	return o
}
