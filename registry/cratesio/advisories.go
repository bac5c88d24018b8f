package cratesio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"yolop.dev/internal/atomicfile"
)

// Advisories are published beside the index, one file per crate, at
// advisories/<crate>.json (the crate name lowercased), RustSec-like:
//
//	{"advisories": [{"id": "YOLOP-2026-0001", "crate": "yolop-extension-echo",
//	  "versions": "<1.2.0", "severity": "critical",
//	  "description": "…", "url": "https://…"}]}
//
// A registry without the file has no advisories for the crate (404).

// Severities of an advisory, lowest first.
const (
	SeverityLow      = "low"
	SeverityMedium   = "medium"
	SeverityHigh     = "high"
	SeverityCritical = "critical"
)

// An Advisory says that some versions of a crate must not (critical) or
// should not be used.
type Advisory struct {
	ID    string `json:"id"`
	Crate string `json:"crate"`
	// Versions is the affected range as a cargo version requirement
	// ("<1.2.0", ">=1.0.0, <1.1.3", "=0.4.0").
	Versions    string `json:"versions"`
	Severity    string `json:"severity"`
	Description string `json:"description"`
	URL         string `json:"url,omitempty"`
}

// advisoryFile is the document at advisories/<crate>.json.
type advisoryFile struct {
	Advisories []Advisory `json:"advisories"`
}

var advisoryID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Validate checks that a has an id, a crate, a parseable range, a known
// severity and a description.
func (a Advisory) Validate() error {
	if !advisoryID.MatchString(a.ID) {
		return fmt.Errorf("advisory id %q: want letters, digits, '.', '_' or '-' (e.g. YOLOP-2026-0001)", a.ID)
	}
	if err := ValidateName(a.Crate); err != nil {
		return fmt.Errorf("advisory %s: %w", a.ID, err)
	}
	if strings.TrimSpace(a.Versions) == "" {
		return fmt.Errorf("advisory %s: versions is empty; give the affected range (e.g. \"<1.2.0\", or \"*\" for every version)", a.ID)
	}
	if _, err := ParseRequirement(a.Versions); err != nil {
		return fmt.Errorf("advisory %s: versions %q: %w", a.ID, a.Versions, err)
	}
	switch a.Severity {
	case SeverityLow, SeverityMedium, SeverityHigh, SeverityCritical:
	default:
		return fmt.Errorf("advisory %s: severity %q: want low, medium, high or critical", a.ID, a.Severity)
	}
	if strings.TrimSpace(a.Description) == "" {
		return fmt.Errorf("advisory %s: description is empty", a.ID)
	}
	return nil
}

// Affects reports whether version is in the advisory's range. A version or
// range that does not parse is treated as affected: an advisory is never
// silently ignored.
func (a Advisory) Affects(version string) bool {
	v, err := semver.StrictNewVersion(version)
	if err != nil {
		return true
	}
	r, err := ParseRequirement(a.Versions)
	if err != nil {
		return true
	}
	if r.Matches(v) {
		return true
	}
	// A pre-release is affected when its release is in range: "<1.2.0"
	// covers 1.1.0-rc.1 too.
	if v.Prerelease() != "" {
		rel, _ := v.SetPrerelease("")
		return r.Matches(&rel)
	}
	return false
}

// Critical reports whether the advisory's severity is critical.
func (a Advisory) Critical() bool { return a.Severity == SeverityCritical }

// AdvisoryPath is the path of a crate's advisories under the index root.
func AdvisoryPath(crate string) string {
	return "advisories/" + strings.ToLower(crate) + ".json"
}

func parseAdvisories(crate string, body []byte) ([]Advisory, error) {
	var f advisoryFile
	if err := json.Unmarshal(body, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", AdvisoryPath(crate), err)
	}
	var out []Advisory
	for _, a := range f.Advisories {
		if !strings.EqualFold(a.Crate, crate) {
			continue // a file speaks for its own crate only
		}
		// An entry that fails validation is kept when it has an id (an
		// unparseable range affects every version, see Affects); one
		// without an id makes the file malformed.
		if err := a.Validate(); err != nil && a.ID == "" {
			return nil, fmt.Errorf("%s: %w", AdvisoryPath(crate), err)
		}
		out = append(out, a)
	}
	return out, nil
}

// Advisories fetches (or revalidates, from the index cache) the advisories
// the registry publishes for crate. A registry that has none (404) returns
// nil and no error; any other failure is returned, for the caller to warn
// about, together with the advisories cached at the last successful fetch
// when there is such a copy.
func (c *Client) Advisories(ctx context.Context, crate string) ([]Advisory, error) {
	if err := ValidateName(crate); err != nil {
		return nil, err
	}
	var out []Advisory
	cfg, err := c.Config(ctx)
	if err == nil {
		_, err = c.fetchIndexFile(ctx, AdvisoryPath(crate), cfg.AuthRequired, func(body []byte) error {
			var perr error
			out, perr = parseAdvisories(crate, body)
			return perr
		})
	}
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		err = fmt.Errorf("advisories for %s in registry %s: %w", crate, c.Registry(), err)
		// Offline, the copy cached at the last successful fetch still
		// counts: cutting the network must not lift an advisory.
		if _, body, ok := readCache(c.cachePath(AdvisoryPath(crate))); ok {
			if cached, perr := parseAdvisories(crate, body); perr == nil {
				return cached, fmt.Errorf("%w (using the copy cached at the last fetch)", err)
			}
		}
		return nil, err
	}
	return out, nil
}

// WriteAdvisory adds a to the static index in indexDir (written by
// [Publish]), replacing an advisory of the same id, and returns the file
// it wrote. The index must exist (its config.json); the crate need not
// be published.
func WriteAdvisory(indexDir string, a Advisory) (string, error) {
	if err := a.Validate(); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(indexDir, "config.json")); err != nil {
		return "", fmt.Errorf("%s is not a static index (no config.json): %w; publish a crate into it first", indexDir, err)
	}
	path := filepath.Join(indexDir, filepath.FromSlash(AdvisoryPath(a.Crate)))
	var f advisoryFile
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &f); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	f.Advisories = slices.DeleteFunc(f.Advisories, func(x Advisory) bool { return x.ID == a.ID })
	f.Advisories = append(f.Advisories, a)
	slices.SortFunc(f.Advisories, func(x, y Advisory) int { return strings.Compare(x.ID, y.ID) })
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return path, nil
}
