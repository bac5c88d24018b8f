package cratesio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// indexVMax is the highest index format version understood (cargo's
// INDEX_V_MAX); entries with a higher "v" are ignored.
const indexVMax = 2

// An IndexEntry is one line of a sparse-index file: one published version.
// Unknown fields are ignored.
type IndexEntry struct {
	Name     string              `json:"name"`
	Vers     string              `json:"vers"`
	Deps     []Dependency        `json:"deps"`
	Cksum    string              `json:"cksum"`
	Features map[string][]string `json:"features"`
	// Features2 is merged into Features by [ParseIndexLine].
	Features2   map[string][]string `json:"features2,omitempty"`
	Yanked      bool                `json:"yanked"`
	Links       *string             `json:"links,omitempty"`
	V           uint32              `json:"v,omitempty"`
	RustVersion string              `json:"rust_version,omitempty"`
	Pubtime     string              `json:"pubtime,omitempty"`

	version *semver.Version
}

// Version returns the parsed vers field.
func (e *IndexEntry) Version() *semver.Version { return e.version }

// A Dependency is one entry of an index line's deps array.
type Dependency struct {
	Name            string   `json:"name"`
	Req             string   `json:"req"`
	Features        []string `json:"features"`
	Optional        bool     `json:"optional"`
	DefaultFeatures bool     `json:"default_features"`
	Target          *string  `json:"target"`
	// Kind is "normal", "dev" or "build"; a missing or null kind reads as "normal".
	Kind     string  `json:"kind"`
	Registry *string `json:"registry"`
	Package  *string `json:"package"`
}

// ParseIndexLine parses one index line. It checks that vers is strict
// SemVer 2.0 and cksum is 64 lowercase hex digits, merges features2 into
// features and defaults a missing dependency kind to "normal". It does not
// filter on v; see [ParseIndexFile].
func ParseIndexLine(line []byte) (IndexEntry, error) {
	var e IndexEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return IndexEntry{}, fmt.Errorf("not a JSON index entry: %w", err)
	}
	if e.Name == "" {
		return IndexEntry{}, fmt.Errorf("the entry has no name")
	}
	v, err := semver.StrictNewVersion(e.Vers)
	if err != nil {
		return IndexEntry{}, fmt.Errorf("entry %s: vers %q is not SemVer 2.0: %v", e.Name, e.Vers, err)
	}
	e.version = v
	if !isLowerHex64(e.Cksum) {
		return IndexEntry{}, fmt.Errorf("entry %s %s: cksum %q is not 64 lowercase hex digits", e.Name, e.Vers, e.Cksum)
	}
	if e.V == 0 {
		e.V = 1
	}
	if len(e.Features2) > 0 {
		if e.Features == nil {
			e.Features = map[string][]string{}
		}
		for k, v := range e.Features2 {
			e.Features[k] = append(e.Features[k], v...)
		}
		e.Features2 = nil
	}
	for i := range e.Deps {
		if e.Deps[i].Kind == "" {
			e.Deps[i].Kind = "normal"
		}
	}
	return e, nil
}

func isLowerHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// An IndexFile is the parsed content of one crate's index file.
type IndexFile struct {
	// Entries are the usable lines whose name equals the requested name byte
	// for byte, in file order.
	Entries []IndexEntry
	// CaseVariants are names found in the file that equal the requested
	// name only ignoring case (the "did you mean" candidates).
	CaseVariants []string
	// Skipped describes lines that were ignored (malformed, bad cksum, v too
	// new), one message each.
	Skipped []string
}

// ParseIndexFile parses an index file body for crate name. A malformed line
// is skipped and described in Skipped, never fatal; an entry with v > 2 is
// skipped. A line for a different crate or a version listed twice makes the
// file corrupt ([ErrIndexCorrupt]). An empty body has no versions.
func ParseIndexFile(name string, body []byte) (*IndexFile, error) {
	f := &IndexFile{}
	seen := map[string]bool{}
	seenVariant := map[string]bool{}
	for n, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		e, err := ParseIndexLine(line)
		if err != nil {
			f.Skipped = append(f.Skipped, fmt.Sprintf("line %d: %v", n+1, err))
			continue
		}
		if e.Name != name {
			if !strings.EqualFold(e.Name, name) {
				return nil, fmt.Errorf("%w: index file for %s has a line %d for crate %q", ErrIndexCorrupt, name, n+1, e.Name)
			}
			if !seenVariant[e.Name] {
				seenVariant[e.Name] = true
				f.CaseVariants = append(f.CaseVariants, e.Name)
			}
			continue
		}
		if e.V > indexVMax {
			f.Skipped = append(f.Skipped, fmt.Sprintf("line %d: %s %s has index format v%d, newer than v%d", n+1, e.Name, e.Vers, e.V, indexVMax))
			continue
		}
		key := e.version.String()
		if seen[key] {
			return nil, fmt.Errorf("%w: %s %s is listed twice", ErrIndexCorrupt, name, e.Vers)
		}
		seen[key] = true
		f.Entries = append(f.Entries, e)
	}
	return f, nil
}

// Select returns the highest entry matching req. Yanked entries and, per
// cargo, pre-releases not named by req are skipped. When locked is not
// empty, the entry with exactly that version is returned if it matches req,
// even when yanked.
func (f *IndexFile) Select(req Requirement, locked string) (*IndexEntry, error) {
	if locked != "" {
		lv, err := semver.StrictNewVersion(locked)
		if err != nil {
			return nil, fmt.Errorf("%w: locked version %q is not SemVer 2.0", ErrInvalidRequirement, locked)
		}
		for i := range f.Entries {
			e := &f.Entries[i]
			if e.version.Equal(lv) && e.version.Metadata() == lv.Metadata() {
				if !req.matchesLocked(e.version) {
					return nil, fmt.Errorf("%w: locked version %s does not satisfy %q", ErrNoMatch, locked, req)
				}
				return e, nil
			}
		}
		return nil, fmt.Errorf("%w: locked version %s is not in the index", ErrNoMatch, locked)
	}
	var best *IndexEntry
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Yanked || !req.Matches(e.version) {
			continue
		}
		if best == nil || e.version.GreaterThan(best.version) {
			best = e
		}
	}
	if best == nil {
		return nil, ErrNoMatch
	}
	return best, nil
}

// matchesLocked is Matches, except that a locked pre-release is accepted by
// an empty requirement (the lock already chose it).
func (r Requirement) matchesLocked(v *semver.Version) bool {
	if len(r.comps) == 0 {
		return true
	}
	return r.Matches(v)
}
