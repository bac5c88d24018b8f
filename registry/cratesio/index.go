package cratesio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
// filter on v; see [ParseIndexFile]. A refused line's error is an
// [*IndexLineError] saying which kind of problem it has.
func ParseIndexLine(line []byte) (IndexEntry, error) {
	var e IndexEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return IndexEntry{}, &IndexLineError{Reason: RefusedJSON, Err: fmt.Errorf("not a JSON index entry: %w", err)}
	}
	if e.Name == "" {
		return IndexEntry{}, &IndexLineError{Reason: RefusedJSON, Err: fmt.Errorf("the entry has no name")}
	}
	v, err := semver.StrictNewVersion(e.Vers)
	if err != nil {
		return IndexEntry{}, &IndexLineError{Reason: RefusedVersion, Err: fmt.Errorf("entry %s: vers %q is not SemVer 2.0: %v", e.Name, e.Vers, err)}
	}
	e.version = v
	if !isLowerHex64(e.Cksum) {
		return IndexEntry{}, &IndexLineError{Reason: RefusedChecksum, Err: fmt.Errorf("entry %s %s: cksum %q is not 64 lowercase hex digits", e.Name, e.Vers, truncate(e.Cksum, 70))}
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

// A RefuseReason is the kind of problem that makes an index line unusable.
type RefuseReason string

// Why an index line is refused. Yanked versions are usable lines and are
// not refused at parse time; [IndexFile.Refusals] adds them for a
// requirement.
const (
	RefusedJSON     RefuseReason = "malformed JSON"             // not JSON, wrong field types, or no name
	RefusedChecksum RefuseReason = "checksum field malformed"   // cksum is not 64 lowercase hex digits
	RefusedVersion  RefuseReason = "unsupported version syntax" // vers is not SemVer 2.0
	RefusedFormat   RefuseReason = "index format too new"       // v is above the highest format understood
	RefusedName     RefuseReason = "wrong name"                 // the name differs from the crate's in case
	RefusedYanked   RefuseReason = "yanked"                     // the version was yanked by its publisher
)

// An IndexLineError is why [ParseIndexLine] refused a line.
type IndexLineError struct {
	Reason RefuseReason
	Err    error
}

func (e *IndexLineError) Error() string { return e.Err.Error() }
func (e *IndexLineError) Unwrap() error { return e.Err }

// A RefusedLine is one index line that cannot be installed.
type RefusedLine struct {
	// Line is the 1-based line number in the index file.
	Line   int
	Reason RefuseReason
	// Detail says what is wrong with the line, for the user.
	Detail string
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
	// Refused lists every line that cannot be installed, in file order,
	// with the kind of problem: the lines in Skipped and the case variants.
	Refused []RefusedLine
	// Lines is the number of non-empty lines in the file (one per
	// published version).
	Lines int
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
		f.Lines++
		e, err := ParseIndexLine(line)
		if err != nil {
			reason := RefusedJSON
			var le *IndexLineError
			if errors.As(err, &le) {
				reason = le.Reason
			}
			f.Skipped = append(f.Skipped, fmt.Sprintf("line %d: %v", n+1, err))
			f.Refused = append(f.Refused, RefusedLine{Line: n + 1, Reason: reason, Detail: err.Error()})
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
			f.Refused = append(f.Refused, RefusedLine{Line: n + 1, Reason: RefusedName,
				Detail: fmt.Sprintf("version %s is published as %q, and names are case-sensitive", e.Vers, e.Name)})
			continue
		}
		if e.V > indexVMax {
			msg := fmt.Sprintf("%s %s has index format v%d, newer than the v%d this yolop reads", e.Name, e.Vers, e.V, indexVMax)
			f.Skipped = append(f.Skipped, fmt.Sprintf("line %d: %s", n+1, msg))
			f.Refused = append(f.Refused, RefusedLine{Line: n + 1, Reason: RefusedFormat, Detail: msg})
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

// Refusals returns why the versions in the file cannot be installed for
// req: the refused lines, then the entries that match req but are yanked
// (Line 0, Detail the version). Entries that merely do not match req are
// not refusals.
func (f *IndexFile) Refusals(req Requirement) []RefusedLine {
	out := slices.Clone(f.Refused)
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Yanked && req.Matches(e.version) {
			out = append(out, RefusedLine{Reason: RefusedYanked, Detail: e.Vers})
		}
	}
	return out
}

// refuseOrder is the order reasons are listed in a summary.
var refuseOrder = []RefuseReason{RefusedJSON, RefusedChecksum, RefusedVersion, RefusedFormat, RefusedName, RefusedYanked}

// describeRefusals summarises refused for an index file of lines lines:
// "found 3 versions, refused: 2 checksum field malformed (lines 1, 3;
// first: …), 1 yanked (0.1.0)". With a single line the count is left out:
// "found 1 version, refused: checksum field malformed (line 1: …)".
func describeRefusals(lines int, refused []RefusedLine) string {
	if len(refused) == 0 {
		return ""
	}
	var b strings.Builder
	if lines == 1 {
		b.WriteString("found 1 version, refused: ")
	} else {
		fmt.Fprintf(&b, "found %d versions, refused: ", lines)
	}
	first := true
	for _, reason := range refuseOrder {
		var group []RefusedLine
		for _, r := range refused {
			if r.Reason == reason {
				group = append(group, r)
			}
		}
		if len(group) == 0 {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		if lines != 1 {
			fmt.Fprintf(&b, "%d ", len(group))
		}
		b.WriteString(string(reason))
		if reason == RefusedYanked {
			var vers []string
			for _, r := range group {
				vers = append(vers, r.Detail)
			}
			fmt.Fprintf(&b, " (%s)", listUpTo(vers, 8))
			continue
		}
		if len(group) == 1 {
			fmt.Fprintf(&b, " (line %d: %s)", group[0].Line, truncate(group[0].Detail, 160))
			continue
		}
		var nums []string
		for _, r := range group {
			nums = append(nums, fmt.Sprint(r.Line))
		}
		fmt.Fprintf(&b, " (lines %s; first: %s)", listUpTo(nums, 8), truncate(group[0].Detail, 160))
	}
	return b.String()
}

// refusalHint says what the user can do about refused, "" when the
// summary says it all. indexURL names the index file.
func refusalHint(refused []RefusedLine, indexURL string) string {
	var broken, format bool
	for _, r := range refused {
		switch r.Reason {
		case RefusedJSON, RefusedChecksum, RefusedVersion:
			broken = true
		case RefusedFormat:
			format = true
		}
	}
	var hints []string
	if broken {
		hints = append(hints, fmt.Sprintf("the registry's index file %s has malformed lines: report it to the registry's maintainer", indexURL))
	}
	if format {
		hints = append(hints, "a newer yolop may read the newer index format")
	}
	return strings.Join(hints, "; ")
}

func listUpTo(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(", … (%d more)", len(items)-n)
}
