package packaging

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"yolop.dev/internal/atomicfile"
)

// ConfigDir is $YOLOP_CONFIG_DIR if set, else os.UserConfigDir()/yolop. It
// holds extensions/, extensions.lock, settings.toml and connections.toml.
func ConfigDir() (string, error) {
	if d := os.Getenv("YOLOP_CONFIG_DIR"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return "", fmt.Errorf("YOLOP_CONFIG_DIR=%q: %w", d, err)
		}
		return abs, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config directory (set YOLOP_CONFIG_DIR to choose one): %w", err)
	}
	return filepath.Join(base, "yolop"), nil
}

// Store layout names inside the config directory.
const (
	ExtensionsDirName = "extensions"
	LockFileName      = "extensions.lock"
	FileLockName      = ".lock"
	journalName       = ".txn.json"
	stagingPrefix     = ".tmp-"
	asidePrefix       = ".old-"
)

// A Store is the package store in one config directory:
//
//	<config>/.lock               file lock held while the store changes
//	<config>/extensions.lock     what was approved (see [Lockfile])
//	<config>/extensions/<name>/  one installed package (git and crate sources)
//	<config>/extensions/.tmp-*   staging, .old-* set-aside packages and
//	<config>/extensions/.txn.json  the journal of an install in progress
//
// Path sources are not copied: their entry points at the directory.
// Methods are safe for concurrent use by many goroutines and processes:
// changes hold an exclusive file lock, reads a shared one.
type Store struct {
	dir string
	// pollInterval is how often a blocked lock attempt retries.
	pollInterval time.Duration
	// hook, if set, is called at each step of a change (tests use it to
	// crash the process at that point).
	hook func(step string)
}

// NewStore returns the store rooted at configDir (created on first change).
func NewStore(configDir string) *Store {
	return &Store{dir: configDir, pollInterval: 20 * time.Millisecond}
}

// DefaultStore returns the store in [ConfigDir].
func DefaultStore() (*Store, error) {
	dir, err := ConfigDir()
	if err != nil {
		return nil, err
	}
	return NewStore(dir), nil
}

// Dir is the config directory.
func (s *Store) Dir() string { return s.dir }

// ExtensionsDir is <config>/extensions.
func (s *Store) ExtensionsDir() string { return filepath.Join(s.dir, ExtensionsDirName) }

// LockPath is <config>/extensions.lock.
func (s *Store) LockPath() string { return filepath.Join(s.dir, LockFileName) }

func (s *Store) step(name string) {
	if s.hook != nil {
		s.hook(name)
	}
}

// A storeLock is a held store lock, and what taking it created.
type storeLock struct {
	fl *flock.Flock
	// createdDir and createdFile record that taking the lock created the
	// config directory and the lock file: a change that leaves the store
	// empty removes them again (see [Store.tidy]).
	createdDir, createdFile bool
}

// Unlock releases the lock; a nil lock (a read of a store that does not
// exist) has nothing to release.
func (l *storeLock) Unlock() error {
	if l == nil {
		return nil
	}
	return l.fl.Unlock()
}

// maxLockTries bounds how often taking the lock starts over because the
// lock file was removed or replaced while we waited for it.
const maxLockTries = 100

func (s *Store) fileLockPath() string { return filepath.Join(s.dir, FileLockName) }

// lock takes the store's file lock, exclusive or shared, waiting until ctx
// is done. An exclusive lock creates the config directory and the lock
// file when they are missing. A shared lock creates nothing: without a
// lock file (nothing was installed yet, or a failed change tidied an empty
// store away) it returns a nil lock and the caller reads without one,
// which is safe because there is nothing to read but what an atomic
// rename puts there.
//
// A change that tidies an empty store away removes the lock file while it
// holds the lock, so a process that was waiting on that file may get a
// lock nobody else will ever contend for. After every acquisition the
// lock file on disk must therefore still be the file locked; otherwise
// the lock is released and taken again.
func (s *Store) lock(ctx context.Context, exclusive bool) (*storeLock, error) {
	path := s.fileLockPath()
	for try := 1; ; try++ {
		l := &storeLock{}
		flag := os.O_RDONLY
		if exclusive {
			l.createdDir = !exists(s.dir)
			if err := os.MkdirAll(s.dir, 0o755); err != nil {
				return nil, fmt.Errorf("creating config directory %s: %w", s.dir, err)
			}
			l.createdFile = !exists(path)
			flag = os.O_CREATE | os.O_RDWR
		}
		l.fl = flock.New(path, flock.SetFlag(flag))
		var ok bool
		var err error
		if exclusive {
			ok, err = l.fl.TryLockContext(ctx, s.pollInterval)
		} else {
			ok, err = l.fl.TryRLockContext(ctx, s.pollInterval)
		}
		if err == nil && !ok {
			err = ctx.Err()
		}
		if errors.Is(err, fs.ErrNotExist) && ctx.Err() == nil {
			if !exclusive {
				return nil, nil // no store to lock
			}
			if try < maxLockTries {
				continue // the config directory was tidied away under us
			}
		}
		if err != nil {
			return nil, fmt.Errorf("waiting for the extension store lock %s (another yolop is installing?): %w", path, err)
		}
		if lockedFileIsAt(l.fl, path) {
			return l, nil
		}
		l.fl.Unlock()
		if !exclusive && !exists(path) {
			return nil, nil
		}
		if try >= maxLockTries {
			return nil, fmt.Errorf("taking the extension store lock %s: the file keeps being removed or replaced; is another program deleting it?", path)
		}
	}
}

// lockedFileIsAt reports whether path still names the file fl locked.
func lockedFileIsAt(fl *flock.Flock, path string) bool {
	held, err := fl.Stat() // the open, locked file
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	return err == nil && os.SameFile(held, now)
}

// read runs fn under the shared lock, first recovering from a crashed
// change if one left traces. A store that does not exist is read without
// a lock and without creating anything.
func (s *Store) read(ctx context.Context, fn func() error) error {
	l, err := s.lock(ctx, false)
	if err != nil {
		return err
	}
	if s.needsRecovery() {
		// A live writer would hold the exclusive lock, so these are traces
		// of a crash: upgrade and repair before reading.
		l.Unlock()
		l, err = s.lock(ctx, true)
		if err != nil {
			return err
		}
		if err := s.recover(); err != nil {
			l.Unlock()
			return err
		}
	}
	defer l.Unlock()
	return fn()
}

// write runs fn under the exclusive lock, after recovery. When the store
// holds nothing afterwards, the scaffolding this call created is removed
// again ([Store.tidy]), whether fn succeeded or not.
func (s *Store) write(ctx context.Context, fn func() error) error {
	l, err := s.lock(ctx, true)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if err := s.recover(); err != nil {
		return err
	}
	extExisted := exists(s.ExtensionsDir())
	err = fn()
	s.tidy(l, extExisted)
	return err
}

// tidy removes the store scaffolding that this change created (an empty
// extensions/, the lock file, an empty config directory) when the store
// holds nothing: no extensions.lock and no extensions/ left. So a failed
// or refused install into a fresh config directory leaves no trace, while
// a store in use keeps its files. The caller holds the exclusive lock.
// After the lock file is gone nothing is touched but the config
// directory, with a plain rmdir that fails if another process has put
// anything there (such as a new lock file) meanwhile.
func (s *Store) tidy(l *storeLock, extExisted bool) {
	if exists(s.LockPath()) {
		return
	}
	if !extExisted {
		_ = os.Remove(s.ExtensionsDir()) // only if empty
	}
	if exists(s.ExtensionsDir()) {
		return
	}
	if l.createdFile {
		_ = os.Remove(s.fileLockPath())
	}
	if l.createdDir {
		_ = os.Remove(s.dir) // only if empty
	}
}

func (s *Store) needsRecovery() bool {
	ents, err := os.ReadDir(s.ExtensionsDir())
	if err != nil {
		return false
	}
	for _, e := range ents {
		n := e.Name()
		if n == journalName || strings.HasPrefix(n, stagingPrefix) || strings.HasPrefix(n, asidePrefix) {
			return true
		}
	}
	return false
}

// Recover restores the store to a consistent state after a crashed or
// killed change: it completes a change whose lock was written and rolls
// back one whose lock was not, then removes stale staging directories. It
// runs automatically before every change and read; call it at startup to
// pay the cost early.
func (s *Store) Recover(ctx context.Context) error {
	return s.write(ctx, func() error { return nil })
}

// A journal records a change in progress. It is written (atomically) before
// the first rename; its presence after a crash tells recover what to undo.
type journal struct {
	Name string `json:"name"`
	// Staged is the staging directory (base name) that becomes the package,
	// or "" for a removal or a path-source install.
	Staged string `json:"staged,omitempty"`
	// Aside is where the previous package directory is moved (base name).
	Aside string `json:"aside"`
	// HadOld records that extensions/<name> existed before the change, so
	// a repeated rollback can tell "already restored" from "fresh install".
	HadOld bool `json:"had_old"`
	// LockSHA256 is the hex SHA-256 of the new extensions.lock: the lock on
	// disk matching it means the change committed.
	LockSHA256 string `json:"lock_sha256"`
}

// safeDirName reports whether a journal's directory name is a plain name
// with the expected prefix, so a tampered journal cannot point elsewhere.
func safeDirName(name, prefix string) bool {
	return strings.HasPrefix(name, prefix) && !strings.ContainsAny(name, `/\`) && !strings.Contains(name, "..")
}

func (s *Store) journalPath() string { return filepath.Join(s.ExtensionsDir(), journalName) }

func (s *Store) recover() error {
	ext := s.ExtensionsDir()
	jp := s.journalPath()
	data, err := os.ReadFile(jp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading install journal %s: %w", jp, err)
	default:
		var j journal
		if err := json.Unmarshal(data, &j); err != nil || !slugRE.MatchString(j.Name) ||
			!safeDirName(j.Aside, asidePrefix) || (j.Staged != "" && !safeDirName(j.Staged, stagingPrefix)) {
			return fmt.Errorf("install journal %s is unreadable; extensions.lock and %s were left untouched: inspect them, then delete the journal by hand", jp, ext)
		}
		if err := s.applyJournal(j); err != nil {
			return fmt.Errorf("recovering from an interrupted change to extension %s (journal %s): %w", j.Name, jp, err)
		}
		if err := os.Remove(jp); err != nil {
			return fmt.Errorf("removing install journal %s: %w", jp, err)
		}
		if err := atomicfile.SyncDir(ext); err != nil {
			return err
		}
	}
	// Without a journal every staging or set-aside directory is garbage.
	ents, err := os.ReadDir(ext)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", ext, err)
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, stagingPrefix) || strings.HasPrefix(n, asidePrefix) {
			if err := os.RemoveAll(filepath.Join(ext, n)); err != nil {
				return fmt.Errorf("removing leftover %s: %w", filepath.Join(ext, n), err)
			}
		}
	}
	tmps, _ := filepath.Glob(filepath.Join(s.dir, "."+LockFileName+".tmp-*"))
	for _, t := range tmps {
		os.Remove(t)
	}
	return nil
}

// applyJournal rolls a change forward (lock committed) or back.
func (s *Store) applyJournal(j journal) error {
	ext := s.ExtensionsDir()
	pkg := filepath.Join(ext, j.Name)
	aside := filepath.Join(ext, j.Aside)
	lockData, err := os.ReadFile(s.LockPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	sum := sha256.Sum256(lockData)
	committed := err == nil && hex.EncodeToString(sum[:]) == j.LockSHA256
	if committed {
		// The new package is in place (it was renamed before the lock was
		// written); drop the old one.
		return os.RemoveAll(aside)
	}
	// Roll back. Every branch is idempotent, so a crash during recovery is
	// repaired by the next recovery.
	if j.Staged != "" {
		staged := filepath.Join(ext, j.Staged)
		switch {
		case exists(staged):
			// Never placed: extensions/<name>, if present, is the old one.
			if err := os.RemoveAll(staged); err != nil {
				return err
			}
		case exists(aside) || !j.HadOld:
			// Placed: extensions/<name> is the new package.
			if err := os.RemoveAll(pkg); err != nil {
				return err
			}
		default:
			// Placed, then already rolled back by an earlier recovery:
			// extensions/<name> is the restored old package.
		}
	}
	if exists(aside) {
		if err := os.Rename(aside, pkg); err != nil {
			return err
		}
	}
	return atomicfile.SyncDir(ext)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// readLock reads extensions.lock; the caller holds the file lock.
func (s *Store) readLock() (*Lockfile, error) { return ReadLockFile(s.LockPath()) }

// ReadLock reads extensions.lock under the shared lock.
func (s *Store) ReadLock(ctx context.Context) (*Lockfile, error) {
	var l *Lockfile
	err := s.read(ctx, func() (err error) {
		l, err = s.readLock()
		return err
	})
	return l, err
}

// commit performs the journaled sequence that replaces (staged != "") or
// removes the package directory of name and writes the new lock:
//
//	journal → rename old aside → rename staged in → write lock (commit
//	point) → remove old → remove journal
func (s *Store) commit(name, staged string, next *Lockfile) error {
	ext := s.ExtensionsDir()
	data, err := next.Marshal()
	if err != nil {
		return fmt.Errorf("encoding %s: %w", s.LockPath(), err)
	}
	sum := sha256.Sum256(data)
	j := journal{Name: name, Aside: asidePrefix + name + "-" + randomSuffix(), LockSHA256: hex.EncodeToString(sum[:])}
	if staged != "" {
		j.Staged = filepath.Base(staged)
	}
	pkg := filepath.Join(ext, name)
	j.HadOld = exists(pkg)
	jb, _ := json.Marshal(j)
	if err := atomicfile.Write(s.journalPath(), jb, 0o644); err != nil {
		return err
	}
	s.step("journal")
	if j.HadOld {
		if err := os.Rename(pkg, filepath.Join(ext, j.Aside)); err != nil {
			return s.rollback(fmt.Errorf("moving the previous package %s aside: %w", pkg, err))
		}
	}
	s.step("aside")
	if staged != "" {
		if err := os.Rename(staged, pkg); err != nil {
			return s.rollback(fmt.Errorf("moving the staged package into %s: %w", pkg, err))
		}
	}
	if err := atomicfile.SyncDir(ext); err != nil {
		return s.rollback(err)
	}
	s.step("placed")
	if err := atomicfile.Write(s.LockPath(), data, 0o644); err != nil {
		return s.rollback(err)
	}
	s.step("locked")
	if err := s.recover(); err != nil {
		return fmt.Errorf("extension %s was committed but cleanup failed: %w", name, err)
	}
	s.step("done")
	return nil
}

// rollback undoes a failed commit through the same path a crash takes.
func (s *Store) rollback(cause error) error {
	if err := s.recover(); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// FetchResult is what a fetcher learned while filling the staging
// directory; it is recorded in the lock entry.
type FetchResult struct {
	Commit        string // resolved git commit
	Version       string // resolved crate version (default: manifest version)
	CrateChecksum string
	// Registry is the sparse registry a crate came from ("sparse+URL/"). It
	// labels the source in the lock and in errors, so a fetcher sets it
	// even when it fails once it knows the registry.
	Registry       string
	ArtifactDigest string
	// Signer is the verified signer of a git commit or tag; nil when
	// unsigned or not a git source.
	Signer *Signer
	// MinisignKey is the minisign key a crate declares for its prebuilt
	// artifacts; "" when none (minisign.go).
	MinisignKey string
}

// merge overrides r's fields with p's non-empty ones.
func (r *FetchResult) merge(p FetchResult) {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&r.Commit, p.Commit}, {&r.Version, p.Version}, {&r.CrateChecksum, p.CrateChecksum},
		{&r.Registry, p.Registry}, {&r.ArtifactDigest, p.ArtifactDigest},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
}

// InstallOptions describe one install or update.
type InstallOptions struct {
	// Source is where the package comes from. A SourcePath is referenced in
	// place; other kinds need Fetch.
	Source Source
	// Fetch fills dir, an empty staging directory inside the store, with
	// the package (e.g. CopyTree, a git export, a crate unpack). It runs
	// under the store's exclusive lock.
	Fetch func(ctx context.Context, dir string) (FetchResult, error)
	// Provision, if set, runs after consent on the staged package (never
	// for a path source): it may add files, such as a prebuilt server in
	// bin/, that become part of the approved content hash. Its non-empty
	// result fields override Fetch's. Nothing it downloads or runs happens
	// before the user approved the manifest. When the provisioned package
	// equals the approved one (same content hash and source), nothing is
	// written: an identical update stays a silent no-op.
	Provision func(ctx context.Context, dir string, m *Manifest) (FetchResult, error)
	// Repair replaces the store copy even when the fetched package equals
	// the approved one: the copy on disk was damaged (VerifyInstalled
	// failed) and is swapped for the fresh fetch in one atomic commit.
	Repair bool
	// Name, if set, is the extension name the manifest must declare.
	Name string
	// Approve is asked for consent after the package is staged and read,
	// with the previously approved manifest (nil on a fresh install) and
	// the contribution change. A non-nil error aborts the install and
	// leaves the store untouched. Nil Approve means consent was given
	// beforehand (--yes).
	Approve func(next, prev *Manifest, change Change) error
	// Now stamps installed_at; nil means time.Now.
	Now func() time.Time
}

// InstallResult reports a finished install.
type InstallResult struct {
	Entry    LockEntry
	Manifest *Manifest
	// Previous is the replaced entry, or nil.
	Previous *LockEntry
	// Change is the contribution diff against the previous approval.
	Change Change
	// Unchanged is true when the content hash and source equal the
	// previous entry's: nothing was written (a silent no-op update).
	Unchanged bool
}

// Install stages, reads, approves and commits one package. A failure or
// crash at any point leaves the previous package and extensions.lock as they
// were.
func (s *Store) Install(ctx context.Context, o InstallOptions) (*InstallResult, error) {
	var res *InstallResult
	err := s.write(ctx, func() (err error) {
		res, err = s.install(ctx, o)
		return err
	})
	return res, err
}

func (s *Store) install(ctx context.Context, o InstallOptions) (*InstallResult, error) {
	if o.Source.Kind == "" {
		return nil, fmt.Errorf("install: no source given")
	}
	ext := s.ExtensionsDir()
	if err := os.MkdirAll(ext, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", ext, err)
	}
	var (
		staged string
		dir    string
		fr     FetchResult
	)
	if o.Source.Kind == SourcePath {
		dir = o.Source.Path
	} else {
		if o.Fetch == nil {
			return nil, fmt.Errorf("install %s: a %s source needs a fetcher", o.Source, o.Source.Kind)
		}
		var err error
		staged, err = os.MkdirTemp(ext, stagingPrefix+"install-")
		if err != nil {
			return nil, fmt.Errorf("creating a staging directory in %s: %w", ext, err)
		}
		defer func() {
			if staged != "" {
				os.RemoveAll(staged)
			}
		}()
		s.step("staging")
		fr, err = o.Fetch(ctx, staged)
		o.Source = o.Source.withRegistry(fr.Registry)
		if err != nil {
			return nil, fmt.Errorf("fetching %s: %w", o.Source, err)
		}
		s.step("fetched")
		dir = staged
	}
	m, err := Load(dir)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", o.Source, err)
	}
	if o.Name != "" && m.Name != o.Name {
		return nil, fmt.Errorf("install %s: the manifest names the extension %q, expected %q", o.Source, m.Name, o.Name)
	}
	if want := o.Source.ExtensionName(); want != "" && o.Name == "" && m.Name != want {
		return nil, fmt.Errorf("install %s: crate %s must hold extension %q, but its manifest names %q", o.Source, o.Source.Crate, want, m.Name)
	}
	var listing FileListing
	if o.Source.Kind == SourcePath {
		// A live directory may hold build output (target/, node_modules/):
		// pin only what was approved, the manifest and the files it names.
		listing, err = manifestListing(m)
	} else {
		listing, err = listStored(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", o.Source, err)
	}
	lock, err := s.readLock()
	if err != nil {
		return nil, err
	}
	res := &InstallResult{Manifest: m}
	var prevM *Manifest
	if prev := lock.Entry(m.Name); prev != nil {
		p := *prev
		res.Previous = &p
		// With Provision the decision waits until the package is complete.
		if !o.Repair && o.Provision == nil && prev.ContentHash == listing.Hash() && prev.SameSource(o.Source) && slices.Equal(prev.Skills, m.SkillPins) {
			res.Entry, res.Unchanged = p, true
			return res, nil
		}
		if prevM, err = prev.ApprovedManifest(); err != nil {
			return nil, err
		}
	}
	res.Change = Diff(prevM, m)
	if o.Source.Kind == SourceGit {
		signerChange(&res.Change, res.Previous, fr.Signer)
	}
	if o.Source.Kind == SourceCrate {
		minisignChange(&res.Change, res.Previous, fr.MinisignKey)
	}
	if o.Approve != nil {
		if err := o.Approve(m, prevM, res.Change); err != nil {
			return nil, fmt.Errorf("install %s: %w", m.Name, err)
		}
	}
	if o.Provision != nil && staged != "" {
		s.step("approved")
		pr, err := o.Provision(ctx, staged, m)
		if err != nil {
			return nil, fmt.Errorf("install %s: %w", m.Name, err)
		}
		fr.merge(pr)
		if listing, err = listStored(dir); err != nil {
			return nil, fmt.Errorf("install %s: %w", o.Source, err)
		}
		// Provisioned content identical to the approved one: a no-op.
		if p := res.Previous; !o.Repair && p != nil && p.ContentHash == listing.Hash() && p.SameSource(o.Source) && slices.Equal(p.Skills, m.SkillPins) {
			res.Entry, res.Unchanged = *p, true
			return res, nil
		}
	}
	mj, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("install %s: encoding manifest: %w", m.Name, err)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	e := LockEntry{
		Name: m.Name, Source: o.Source.String(), Kind: o.Source.Kind,
		Commit: fr.Commit, Version: m.Version, ContentHash: listing.Hash(), Files: listing,
		CrateChecksum: fr.CrateChecksum, Registry: fr.Registry, ArtifactDigest: fr.ArtifactDigest,
		Skills: m.SkillPins, Manifest: mj, InstalledAt: now().UTC(),
		Signer: fr.Signer, MinisignKey: fr.MinisignKey,
	}
	if fr.Version != "" {
		e.Version = fr.Version
	}
	lock.Put(e)
	if err := s.commit(m.Name, staged, lock); err != nil {
		return nil, fmt.Errorf("install %s: %w", m.Name, err)
	}
	staged = "" // renamed into place
	res.Entry = e
	return res, nil
}

// manifestListing lists the manifest file and the files it references
// (config schema, prompt).
func manifestListing(m *Manifest) (FileListing, error) {
	files := []string{m.File}
	if f := m.Yolop; f != nil {
		if f.ConfigSchemaFile != "" {
			files = append(files, filepath.Join(m.Dir, filepath.FromSlash(f.ConfigSchemaFile)))
		}
		if f.Prompt != nil && f.Prompt.File != "" {
			files = append(files, filepath.Join(m.Dir, filepath.FromSlash(f.Prompt.File)))
		}
	}
	if d := m.Declarative; d != nil {
		files = append(files, d.Files(m.Dir)...)
	}
	var l FileListing
	for _, p := range files {
		sum, err := hashFile(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(m.Dir, p)
		l = append(l, FileEntry{Path: filepath.ToSlash(rel), Mode: ModeFile, SHA256: sum})
	}
	slices.SortFunc(l, func(a, b FileEntry) int { return strings.Compare(a.Path, b.Path) })
	l = slices.CompactFunc(l, func(a, b FileEntry) bool { return a.Path == b.Path })
	return l, nil
}

// Remove deletes an installed extension's package (a path source's
// directory is left alone) and its lock entry.
func (s *Store) Remove(ctx context.Context, name string) error {
	return s.write(ctx, func() error {
		if !slugRE.MatchString(name) {
			return fmt.Errorf("remove %q: not a valid extension name", name)
		}
		lock, err := s.readLock()
		if err != nil {
			return err
		}
		if !lock.Delete(name) && !exists(filepath.Join(s.ExtensionsDir(), name)) {
			return fmt.Errorf("remove %s: %w (see `yolop ext list`)", name, ErrNotInstalled)
		}
		if err := os.MkdirAll(s.ExtensionsDir(), 0o755); err != nil {
			return err
		}
		if err := s.commit(name, "", lock); err != nil {
			return fmt.Errorf("remove %s: %w", name, err)
		}
		return nil
	})
}

// An Installed is one package as seen by [Store.List].
type Installed struct {
	Name string
	// Entry is the lock entry; nil for a directory the lock does not know.
	Entry *LockEntry
	// Dir is the package directory (the source directory for a path source).
	Dir string
	// Manifest is the loaded manifest, nil when Warning is set.
	Manifest *Manifest
	// PathSource marks a path source: live, not hash-verified.
	PathSource bool
	// Warning explains why the package is unusable and was skipped
	// (malformed manifest, missing directory, changed files, not in the
	// lock). Empty means healthy.
	Warning string
	// Err is the error behind Warning, for errors.Is (e.g.
	// [ErrManifestChanged], [ErrTampered]); nil when healthy or when the
	// directory is not in the lock.
	Err error
}

// List returns every installed package, sorted by name. A malformed or
// tampered package is returned with Warning set, never as an error; only an
// unreadable extensions.lock fails the call.
func (s *Store) List(ctx context.Context) ([]Installed, error) {
	var out []Installed
	err := s.read(ctx, func() error {
		lock, err := s.readLock()
		if err != nil {
			return err
		}
		known := map[string]bool{}
		for i := range lock.Extensions {
			e := lock.Extensions[i]
			known[e.Name] = true
			v, err := s.verify(&e)
			in := Installed{Name: e.Name, Entry: &e, Dir: v.Dir, Manifest: v.Manifest, PathSource: v.Exempt}
			if err != nil {
				in.Warning, in.Err = err.Error(), err
				in.Manifest = nil
			}
			out = append(out, in)
		}
		ents, _ := os.ReadDir(s.ExtensionsDir())
		for _, d := range ents {
			if n := d.Name(); !strings.HasPrefix(n, ".") && !known[n] {
				out = append(out, Installed{Name: n, Dir: filepath.Join(s.ExtensionsDir(), n),
					Warning: fmt.Sprintf("%s is not in %s; remove it with `yolop ext remove %s` or reinstall it", filepath.Join(s.ExtensionsDir(), n), s.LockPath(), n)})
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Installed) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

// Verified is the outcome of [Store.VerifyInstalled].
type Verified struct {
	Entry LockEntry
	// Dir is the package directory to run from.
	Dir string
	// Manifest is the manifest to run under: the loaded store copy, or for
	// a path source the approved manifest (read from the lock, with Dir
	// and File pointing at the source) once the live one is known to widen
	// nothing.
	Manifest *Manifest
	// Exempt marks a path source: its files are not hash-checked (the
	// author's live dev loop), only its manifest; callers should say so in
	// list output.
	Exempt bool
	// Verifier re-checks the package before each spawn of its server (see
	// [Verifier]); its hash cache is warm from this check.
	Verifier *Verifier
}

// VerifyInstalled recomputes the content hash of an installed package and
// loads its manifest. A package whose files changed since approval is
// refused with [ErrTampered], naming the changed files and telling the user
// to re-approve with `yolop ext update <name>`. Path sources are exempt.
func (s *Store) VerifyInstalled(ctx context.Context, name string) (*Verified, error) {
	var v *Verified
	err := s.read(ctx, func() error {
		lock, err := s.readLock()
		if err != nil {
			return err
		}
		e := lock.Entry(name)
		if e == nil {
			return fmt.Errorf("extension %s: %w (install it with `yolop ext install <source>`)", name, ErrNotInstalled)
		}
		v, err = s.verify(e)
		return err
	})
	return v, err
}

func (s *Store) verify(e *LockEntry) (*Verified, error) {
	v := &Verified{Entry: *e, Dir: filepath.Join(s.ExtensionsDir(), e.Name)}
	if e.Kind == SourcePath {
		v.Exempt, v.Dir = true, e.Source
	} else if _, err := os.Stat(v.Dir); err != nil {
		return v, fmt.Errorf("extension %s: package directory %s is missing; reinstall with `yolop ext update %s`", e.Name, v.Dir, e.Name)
	}
	ver, err := NewVerifier(e, v.Dir)
	if err != nil {
		return v, err
	}
	v.Verifier = ver
	if v.Exempt {
		// The live manifest may narrow what was approved, never widen it;
		// the session runs under the approved manifest either way.
		live, err := ver.checkManifest()
		if err != nil {
			return v, err
		}
		m, err := e.ApprovedManifest()
		if err != nil {
			return v, err
		}
		m.Dir, m.File, m.Warnings = live.Dir, live.File, live.Warnings
		if m.SkillsUnpinned() && len(live.SkillPins) > 0 {
			// Approved before skills were pinned: serve them as found,
			// and say so.
			m.Skills, m.SkillPins = live.Skills, live.SkillPins
			m.Warnings = append(slices.Clone(m.Warnings), fmt.Sprintf("%s pins no skills for %s (approved by an older yolop); its skills are served as they are now: run `yolop ext update %s` to review and pin them", s.LockPath(), e.Name, e.Name))
		}
		v.Manifest = m
		return v, nil
	}
	if err := ver.Check(); err != nil {
		return v, err
	}
	m, err := Load(v.Dir)
	if err != nil {
		return v, fmt.Errorf("extension %s: %w", e.Name, err)
	}
	v.Manifest = m
	return v, nil
}

// ServerChecksum returns the hex SHA-256 the approval pinned for the
// executable the capability server runs: the listing's digest of
// bin/<name> for a bare command name (the file the package's bin/ holds,
// which a transport resolves first), or of the relative path a command
// names inside the package. It is "" when nothing is pinned: a path
// source (the author's dev loop), a WASM server, a command found outside
// the package (on PATH), or one that is not an executable regular file in
// the listing. A transport that checks what it executes (go-plugin's
// SecureConfig) refuses a file with another digest; see
// core.ServerSpec.Checksum.
func (v *Verified) ServerChecksum() string {
	if v == nil || v.Exempt || v.Manifest == nil || v.Manifest.Yolop == nil {
		return ""
	}
	cs := v.Manifest.Yolop.CapabilityServer
	if cs == nil || cs.TransportName() == "wasm" {
		return ""
	}
	rel := path.Clean(filepath.ToSlash(cs.Command))
	if name, ok := v.Manifest.ServerBinary(); ok {
		rel = "bin/" + name
	} else if path.IsAbs(rel) || rel == "." || strings.HasPrefix(rel, "../") {
		return ""
	}
	for _, f := range v.Entry.Files {
		if f.Path == rel && f.Mode == ModeExec {
			return f.SHA256
		}
	}
	return ""
}
