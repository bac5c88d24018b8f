// Package firstseen records when yolop first saw each version of each
// registry crate and each commit of each git ref it tracks, and holds an
// update back until what it would install has been seen for the update
// cooldown ([update] cooldown in settings.toml): a poisoned release that
// is found and yanked within the wait never reaches this machine.
//
// The record is <config>/first-seen.json, written atomically under its own
// file lock. A time, once recorded, is never moved later or forgotten by
// yolop: a file that cannot be read is an error, never silently reset,
// because a reset would restart (and so never shorten) every wait only if
// it were deliberate.
package firstseen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"yolop.dev/internal/atomicfile"
)

// FileName is the record's file name in the config directory.
const FileName = "first-seen.json"

// Kinds of record.
const (
	// Crate records versions of a crate, keyed by [CrateKey].
	Crate = "crates"
	// Git records commits of a git ref, keyed by [GitKey].
	Git = "git"
)

// CrateKey is the record key of crate in registry ("sparse+URL/").
func CrateKey(registry, crate string) string { return registry + "#" + crate }

// GitKey is the record key of ref rev ("" for the remote's HEAD) at the
// repository url.
func GitKey(url, rev string) string { return url + "@" + rev }

// A Store is the first-seen record of one config directory. It is safe for
// concurrent use by goroutines and processes.
type Store struct {
	path, lockPath string
}

// New returns the store in configDir.
func New(configDir string) *Store {
	return &Store{path: filepath.Join(configDir, FileName), lockPath: filepath.Join(configDir, ".first-seen.lock")}
}

// Path is the record's file.
func (s *Store) Path() string { return s.path }

// file is the on-disk form: kind → key → item (version or commit) → the
// UTC time it was first seen.
type file struct {
	Version int                                        `json:"version"`
	Seen    map[string]map[string]map[string]time.Time `json:"seen"`
}

// ErrCorrupt marks a record that cannot be read.
var ErrCorrupt = errors.New("first-seen record is unreadable")

func (s *Store) load() (*file, error) {
	f := &file{Version: 1, Seen: map[string]map[string]map[string]time.Time{}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil || f.Version != 1 {
		if err == nil {
			err = fmt.Errorf("version %d, this yolop reads version 1", f.Version)
		}
		return nil, fmt.Errorf("%w: %s: %v; it records when each update was first seen, so yolop does not reset it: repair it, or delete it to restart every update's cooldown from now", ErrCorrupt, s.path, err)
	}
	if f.Seen == nil {
		f.Seen = map[string]map[string]map[string]time.Time{}
	}
	return f, nil
}

func (s *Store) lock(ctx context.Context) (*flock.Flock, error) {
	if err := os.MkdirAll(filepath.Dir(s.lockPath), 0o755); err != nil {
		return nil, err
	}
	fl := flock.New(s.lockPath)
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("waiting for the first-seen lock %s: %w", s.lockPath, err)
	}
	return fl, nil
}

// Observe records now as the first-seen time of each of items under kind
// and key that has none yet, and returns the first-seen time of every item
// recorded under key (the ones seen before included).
func (s *Store) Observe(ctx context.Context, kind, key string, items []string, now time.Time) (map[string]time.Time, error) {
	fl, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer fl.Unlock()
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	byKey := f.Seen[kind]
	if byKey == nil {
		byKey = map[string]map[string]time.Time{}
		f.Seen[kind] = byKey
	}
	seen := byKey[key]
	if seen == nil {
		seen = map[string]time.Time{}
		byKey[key] = seen
	}
	changed := false
	for _, it := range items {
		if _, ok := seen[it]; !ok {
			seen[it] = now.UTC().Truncate(time.Second)
			changed = true
		}
	}
	out := make(map[string]time.Time, len(seen))
	for k, v := range seen {
		out[k] = v
	}
	if !changed {
		return out, nil
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(s.path, append(b, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", s.path, err)
	}
	return out, nil
}

// Seen returns the first-seen times recorded under kind and key, without
// recording anything (nil when there are none).
func (s *Store) Seen(ctx context.Context, kind, key string) (map[string]time.Time, error) {
	if _, err := os.Stat(s.path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing seen yet; do not create the config directory
	}
	fl, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer fl.Unlock()
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	return f.Seen[kind][key], nil
}
