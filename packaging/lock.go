package packaging

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"yolop.dev/core/skill"
)

// LockVersion is the extensions.lock format version this package reads and
// writes.
const LockVersion = 1

// A Lockfile is the content of extensions.lock: what was approved for each
// installed extension.
type Lockfile struct {
	Version    int         `json:"version"`
	Extensions []LockEntry `json:"extensions"`
}

// A LockEntry pins one installed extension.
type LockEntry struct {
	Name string `json:"name"`
	// Source is the install source in ParseSource form. A crate from a
	// registry other than crates.io reads "sparse+<URL>#<crate>[@req]";
	// older locks say "crates.io:<crate>" for every registry and rely on
	// Registry (see [LockEntry.SameSource]).
	Source string     `json:"source"`
	Kind   SourceKind `json:"kind"`
	// Commit is the resolved 40- (or 64-) hex commit of a git source.
	Commit string `json:"commit,omitempty"`
	// Version is the package version from the manifest (for a crate, the
	// resolved crate version).
	Version string `json:"version,omitempty"`
	// ContentHash is FileListing.Hash of the approved package.
	ContentHash string `json:"content_hash"`
	// Files is the approved listing, so a mismatch can name the files.
	Files FileListing `json:"files"`
	// CrateChecksum is the registry's SHA-256 of the .crate file.
	CrateChecksum string `json:"crate_checksum,omitempty"`
	// Registry is the sparse index URL of a crate source.
	Registry string `json:"registry,omitempty"`
	// ArtifactDigest is the SHA-256 of the prebuilt server binary installed.
	ArtifactDigest string `json:"artifact_digest,omitempty"`
	// Manifest is the approved manifest, normalised ($ref and prompt file
	// resolved): the baseline an update's contribution diff compares with.
	Manifest json.RawMessage `json:"manifest,omitempty"`
	// Skills pins the approved skills of a package whose facet declares
	// them, by name and content digest, sorted by name: empty (written as
	// []) when it ships none. A lock written before skills were pinned
	// has no key (nil): its skills are approved at the next update, and
	// until then a path source serves them with a warning (see
	// [LockEntry.ApprovedManifest]).
	Skills []SkillPin `json:"skills,omitzero"`
	// InstalledAt is when this entry was approved.
	InstalledAt time.Time `json:"installed_at"`
	// Signer is the key that signed the approved git commit (or its tag),
	// pinned at approval; nil when it was unsigned (see signer.go).
	Signer *Signer `json:"signer,omitempty"`
	// MinisignKey is the minisign public key a crate declared for its
	// prebuilt artifacts, pinned at approval (minisign.go): an update with
	// another key, or none, needs consent again.
	MinisignKey string `json:"minisign_key,omitempty"`
}

// A SkillPin is one approved skill.
type SkillPin struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Digest is the [FileListing.Hash] of the skill's directory,
	// skills/<name>/: SKILL.md and every file beside it.
	Digest string `json:"digest"`
}

// ApprovedManifest decodes the approved manifest recorded in the entry,
// with its skills and their pins from [LockEntry.Skills]. When the facet
// declares skills but the entry pins none (a lock from before skill pins),
// SkillPins is nil: see [Manifest.SkillsUnpinned].
func (e *LockEntry) ApprovedManifest() (*Manifest, error) {
	if len(e.Manifest) == 0 {
		return nil, fmt.Errorf("extensions.lock entry %s records no manifest", e.Name)
	}
	var m Manifest
	if err := json.Unmarshal(e.Manifest, &m); err != nil {
		return nil, fmt.Errorf("extensions.lock entry %s: manifest: %w", e.Name, err)
	}
	if (m.Yolop != nil && m.Yolop.Skills || m.Declarative != nil) && e.Skills != nil {
		m.SkillPins = slices.Clone(e.Skills)
		for _, p := range e.Skills {
			m.Skills = append(m.Skills, skill.Meta{Name: p.Name, Description: p.Description})
		}
	}
	return &m, nil
}

// Entry returns the entry named name, or nil.
func (l *Lockfile) Entry(name string) *LockEntry {
	for i := range l.Extensions {
		if l.Extensions[i].Name == name {
			return &l.Extensions[i]
		}
	}
	return nil
}

// Put replaces or adds e, keeping entries sorted by name.
func (l *Lockfile) Put(e LockEntry) {
	l.Delete(e.Name)
	l.Extensions = append(l.Extensions, e)
	slices.SortFunc(l.Extensions, func(a, b LockEntry) int { return strings.Compare(a.Name, b.Name) })
}

// Delete removes the entry named name, reporting whether it was present.
func (l *Lockfile) Delete(name string) bool {
	n := len(l.Extensions)
	l.Extensions = slices.DeleteFunc(l.Extensions, func(e LockEntry) bool { return e.Name == name })
	return len(l.Extensions) != n
}

// Marshal renders the lock as indented JSON with a trailing newline.
func (l *Lockfile) Marshal() ([]byte, error) {
	c := *l
	c.Version = LockVersion
	if c.Extensions == nil {
		c.Extensions = []LockEntry{}
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

var hashRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
var hexRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// MaxLockBytes caps extensions.lock.
const MaxLockBytes = 64 << 20

// ParseLock parses and checks extensions.lock bytes: the version must be
// LockVersion, names unique and valid, kinds known, hashes well formed and
// each file listing consistent with its content hash. Unknown fields are
// ignored. Any failure wraps [ErrLockCorrupt]; the caller names the file.
func ParseLock(data []byte) (*Lockfile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty (truncated?)", ErrLockCorrupt)
	}
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLockCorrupt, err)
	}
	if probe.Version == nil {
		return nil, fmt.Errorf("%w: no \"version\" field", ErrLockCorrupt)
	}
	if *probe.Version != LockVersion {
		return nil, fmt.Errorf("%w: unknown version %d (this yolop reads version %d; it may have been written by a newer yolop)", ErrLockCorrupt, *probe.Version, LockVersion)
	}
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLockCorrupt, err)
	}
	exact, err := json.Marshal(exactKeys(raw, reflect.TypeFor[Lockfile]()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLockCorrupt, err)
	}
	var l Lockfile
	if err := json.Unmarshal(exact, &l); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLockCorrupt, err)
	}
	seen := map[string]bool{}
	for i, e := range l.Extensions {
		where := fmt.Sprintf("extensions[%d]", i)
		if e.Name != "" {
			where += " (" + e.Name + ")"
		}
		switch {
		case !slugRE.MatchString(e.Name):
			return nil, fmt.Errorf("%w: %s: invalid name %q", ErrLockCorrupt, where, e.Name)
		case seen[e.Name]:
			return nil, fmt.Errorf("%w: %s: duplicate entry for %q", ErrLockCorrupt, where, e.Name)
		case e.Source == "":
			return nil, fmt.Errorf("%w: %s: empty source", ErrLockCorrupt, where)
		case e.Kind != SourcePath && e.Kind != SourceGit && e.Kind != SourceCrate && e.Kind != SourceMarketplace:
			return nil, fmt.Errorf("%w: %s: unknown kind %q", ErrLockCorrupt, where, e.Kind)
		case !hashRE.MatchString(e.ContentHash):
			return nil, fmt.Errorf("%w: %s: content_hash %q is not sha256:<64 hex>", ErrLockCorrupt, where, e.ContentHash)
		case e.CrateChecksum != "" && !hexRE.MatchString(e.CrateChecksum):
			return nil, fmt.Errorf("%w: %s: crate_checksum %q is not 64 hex digits", ErrLockCorrupt, where, e.CrateChecksum)
		case e.Signer != nil && e.Signer.check() != nil:
			return nil, fmt.Errorf("%w: %s: signer: %v", ErrLockCorrupt, where, e.Signer.check())
		}
		seen[e.Name] = true
		for j, f := range e.Files {
			if f.Path == "" || !hexRE.MatchString(f.SHA256) || (f.Mode != ModeFile && f.Mode != ModeExec && f.Mode != ModeSymlink) {
				return nil, fmt.Errorf("%w: %s: files[%d] is malformed", ErrLockCorrupt, where, j)
			}
		}
		for j, p := range e.Skills {
			if skill.ValidName(p.Name) != nil || !hashRE.MatchString(p.Digest) {
				return nil, fmt.Errorf("%w: %s: skills[%d] is malformed (want a skill name and a sha256:<64 hex> digest)", ErrLockCorrupt, where, j)
			}
		}
		if got := e.Files.Hash(); got != e.ContentHash {
			return nil, fmt.Errorf("%w: %s: the recorded file listing hashes to %s, not the recorded content_hash %s (hand-edited?)", ErrLockCorrupt, where, got, e.ContentHash)
		}
		if len(e.Manifest) > 0 {
			if _, err := e.ApprovedManifest(); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrLockCorrupt, where, err)
			}
		}
	}
	return &l, nil
}

// ReadLockFile reads and parses a lock file. A missing file is an empty lock;
// anything unreadable is an error naming the file, never a reset.
func ReadLockFile(path string) (*Lockfile, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lockfile{Version: LockVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxLockBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > MaxLockBytes {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrLockCorrupt, MaxLockBytes)
	}
	l, err := ParseLock(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; it was left untouched: fix or restore it by hand (yolop never resets it)", path, err)
	}
	return l, nil
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
