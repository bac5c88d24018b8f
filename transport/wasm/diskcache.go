package wasm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
)

// The persisted compile cache.
//
// wazero serialises compiled native code into a directory it is given
// (wazero.NewCompilationCacheWithDir) and loads it back on a later compile
// of the same module. Its format checks a CRC of the code only: the
// function offsets, the source map and the tables around it are trusted,
// and a bad entry either fails the compile or runs wrong native code in the
// host. So each module gets a directory of its own, wazero writes there,
// and this layer keeps an HMAC of every file wazero wrote, checked before
// wazero may read any of them:
//
//	<CacheDir>/key          the HMAC key, unless Options.CacheKey is set
//	<CacheDir>/<id>/lock    flock: shared to load, exclusive to rebuild
//	<CacheDir>/<id>/sums    "<hmac> <path>" per file, written last
//	<CacheDir>/<id>/wazero/ wazero's directory
//
// <id> hashes the module's SHA-256, wazero's version, the platform and the
// runtime configuration, so an entry only ever meets the compiler that
// wrote it. An entry that fails the check, or that wazero cannot read, is
// removed and rebuilt under the exclusive lock; two processes compiling the
// same module at once serialise on it and the second loads what the first
// wrote.

const cacheLayout = "yolop-wasm-cache-v1"

// diskCache is one usable cache directory.
type diskCache struct {
	dir string
	key []byte
	log hclog.Logger
}

// openDiskCache prepares dir for use. An error means the directory is not
// used; the caller logs it and carries on without it.
func openDiskCache(dir string, key []byte, log hclog.Logger) (*diskCache, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := checkPrivate(dir); err != nil {
		return nil, err
	}
	if len(key) == 0 {
		if key, err = loadKey(dir); err != nil {
			return nil, fmt.Errorf("cache key: %w", err)
		}
	}
	return &diskCache{dir: dir, key: key, log: log}, nil
}

// loadKey reads <dir>/key, creating it with a random key when it is
// missing or unusable. Creation links a complete temporary file into
// place, so concurrent creators agree on one key.
func loadKey(dir string) ([]byte, error) {
	p := filepath.Join(dir, "key")
	for range 3 {
		b, err := os.ReadFile(p)
		if err == nil && len(b) == 32 {
			return b, nil
		}
		if err == nil {
			// Not a key we wrote: replace it (every entry then fails
			// its check and is rebuilt).
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		key := make([]byte, 32)
		rand.Read(key)
		tmp, err := os.CreateTemp(dir, "key.*.tmp")
		if err != nil {
			return nil, err
		}
		_, werr := tmp.Write(key)
		if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
			os.Remove(tmp.Name())
			return nil, err
		}
		err = os.Link(tmp.Name(), p)
		os.Remove(tmp.Name())
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		// Someone else made it first: read theirs.
	}
	return nil, errors.New("the key file keeps changing under us")
}

// wazeroVersion is the wazero module version this binary was built with,
// as far as the build information tells.
var wazeroVersion = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tetratelabs/wazero" {
				if d.Replace != nil {
					return d.Replace.Path + "@" + d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}()

// entryID names the cache directory of a module.
func entryID(digest [32]byte, guarded bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%x\x00%s\x00%s/%s\x00close-on-context-done=%v\x00", cacheLayout, digest, wazeroVersion, runtime.GOOS, runtime.GOARCH, guarded)
	return hex.EncodeToString(h.Sum(nil))
}

// An entry is the cache directory of one module.
type entry struct {
	c    *diskCache
	dir  string
	lock *flock.Flock
}

func (c *diskCache) entry(digest [32]byte, guarded bool) (*entry, error) {
	dir := filepath.Join(c.dir, entryID(digest, guarded))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &entry{c: c, dir: dir, lock: flock.New(filepath.Join(dir, "lock"))}, nil
}

func (e *entry) wazeroDir() string { return filepath.Join(e.dir, "wazero") }
func (e *entry) sumsPath() string  { return filepath.Join(e.dir, "sums") }

// A cacheOutcome says how compile used the entry.
type cacheOutcome int

const (
	cacheHit      cacheOutcome = iota // loaded a verified entry
	cacheMiss                         // no entry: compiled and stored
	cacheRebuilt                      // a bad entry discarded, compiled and stored
	cacheBypassed                     // the entry was unusable and could not be rebuilt: compiled without it
)

// compile runs build with a wazero compilation cache over the entry's
// directory, verified beforehand: build loads from it when it holds this
// module and otherwise compiles and writes it. It returns what build
// returned, and how the entry was used. Cache trouble is never an error:
// at worst build runs with no persisted cache at all.
func (e *entry) compile(ctx context.Context, build func(wazero.CompilationCache) error) (cacheOutcome, error) {
	if err := lockCtx(ctx, e.lock.TryRLockContext); err != nil {
		e.c.log.Warn("compile cache entry could not be locked; compiling without the cache", "entry", e.dir, "error", err)
		return cacheBypassed, build(nil)
	}
	if ok, _ := e.verify(); ok {
		err := e.build(build)
		e.lock.Unlock()
		if err == nil {
			return cacheHit, nil
		}
		if !isCacheError(err) {
			return cacheHit, err
		}
		e.c.log.Warn("compile cache entry could not be loaded; rebuilding it", "entry", e.dir, "error", err)
	} else {
		e.lock.Unlock()
	}

	if err := lockCtx(ctx, e.lock.TryLockContext); err != nil {
		e.c.log.Warn("compile cache entry could not be locked; compiling without the cache", "entry", e.dir, "error", err)
		return cacheBypassed, build(nil)
	}
	defer e.lock.Unlock()
	ok, reason := e.verify()
	if ok {
		// Another process stored it meanwhile.
		if err := e.build(build); err == nil || !isCacheError(err) {
			return cacheHit, err
		}
		reason = "wazero could not load it"
	}
	outcome := cacheMiss
	if reason != "" {
		outcome = cacheRebuilt
		e.c.log.Warn("compile cache entry failed its check; discarding and rebuilding it", "entry", e.dir, "reason", reason)
	}
	if err := e.clear(); err != nil {
		e.c.log.Warn("compile cache entry could not be removed; compiling without the cache", "entry", e.dir, "error", err)
		return cacheBypassed, build(nil)
	}
	if err := e.build(build); err != nil {
		if isCacheError(err) {
			e.c.log.Warn("compile cache directory is not usable; compiling without it", "entry", e.dir, "error", err)
			_ = e.clear()
			return cacheBypassed, build(nil)
		}
		_ = e.clear()
		return outcome, err
	}
	if err := e.seal(); err != nil {
		e.c.log.Warn("compile cache entry could not be sealed; it will be rebuilt next time", "entry", e.dir, "error", err)
		_ = e.clear()
	}
	return outcome, nil
}

// build runs f with a compilation cache over the entry's wazero directory.
func (e *entry) build(f func(wazero.CompilationCache) error) error {
	cc, err := wazero.NewCompilationCacheWithDir(e.wazeroDir())
	if err != nil {
		return &cacheError{err}
	}
	return f(cc)
}

// A cacheError is a failure of the cache rather than of the module.
type cacheError struct{ err error }

func (e *cacheError) Error() string { return "compile cache: " + e.err.Error() }
func (e *cacheError) Unwrap() error { return e.err }

// isCacheError reports whether a compile failed on the cache: the cache
// directory, or an entry wazero could not deserialise.
func isCacheError(err error) bool {
	var ce *cacheError
	return errors.As(err, &ce) || strings.Contains(err.Error(), "compilationcache")
}

// lockCtx takes a flock, polling until ctx ends.
func lockCtx(ctx context.Context, try func(context.Context, time.Duration) (bool, error)) error {
	ok, err := try(ctx, 5*time.Millisecond)
	if err != nil {
		return err
	}
	if !ok {
		return ctx.Err()
	}
	return nil
}

// files lists the regular files wazero has written (without its temporary
// files), as slash-separated paths relative to the entry.
func (e *entry) files() ([]string, error) {
	var out []string
	err := filepath.WalkDir(e.wazeroDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == e.wazeroDir() {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".tmp") {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		rel, err := filepath.Rel(e.dir, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// mac authenticates one file of the entry: its path and its contents.
func (e *entry) mac(rel string) (string, error) {
	f, err := os.Open(filepath.Join(e.dir, filepath.FromSlash(rel)))
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := hmac.New(sha256.New, e.c.key)
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", cacheLayout, filepath.Base(e.dir), rel)
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// verify reports whether the entry holds files that all match sums, and
// no others. With ok false, reason is empty for an entry that is simply
// absent, else why it was refused.
func (e *entry) verify() (ok bool, reason string) {
	files, err := e.files()
	if err != nil {
		return false, err.Error()
	}
	raw, err := os.ReadFile(e.sumsPath())
	if errors.Is(err, fs.ErrNotExist) {
		if len(files) == 0 {
			return false, ""
		}
		return false, "files without sums (an interrupted write)"
	}
	if err != nil {
		return false, err.Error()
	}
	want := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		sum, rel, found := strings.Cut(sc.Text(), " ")
		if !found {
			return false, "malformed sums file"
		}
		want[rel] = sum
	}
	if len(want) == 0 || len(want) != len(files) {
		return false, fmt.Sprintf("sums list %d files, the entry has %d", len(want), len(files))
	}
	for _, rel := range files {
		sum, listed := want[rel]
		if !listed {
			return false, rel + " is not in sums"
		}
		got, err := e.mac(rel)
		if err != nil {
			return false, err.Error()
		}
		if !hmac.Equal([]byte(got), []byte(sum)) {
			return false, rel + " does not match its sum (corrupt, or written by something else)"
		}
	}
	return true, ""
}

// seal writes sums for the files wazero wrote.
func (e *entry) seal() error {
	files, err := e.files()
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("wazero wrote nothing")
	}
	var b bytes.Buffer
	for _, rel := range files {
		sum, err := e.mac(rel)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s\n", sum, rel)
	}
	tmp, err := os.CreateTemp(e.dir, "sums.*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b.Bytes())
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), e.sumsPath()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// clear removes what wazero wrote and the sums.
func (e *entry) clear() error {
	err1 := os.Remove(e.sumsPath())
	if errors.Is(err1, fs.ErrNotExist) {
		err1 = nil
	}
	return errors.Join(err1, os.RemoveAll(e.wazeroDir()))
}
