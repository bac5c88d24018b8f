package cratesio

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Versions are parsed and ordered with Masterminds/semver (strict SemVer
// 2.0). Requirements are NOT parsed with its Constraints: its caret,
// hyphen-range and pre-release rules differ from cargo's. Requirement below
// follows the semver crate cargo uses (comparators, partial versions and
// the same-major.minor.patch pre-release rule).

type reqOp int

const (
	opExact reqOp = iota
	opGreater
	opGreaterEq
	opLess
	opLessEq
	opTilde
	opCaret
	opWildcard
)

type comparator struct {
	op           reqOp
	major        uint64
	minor, patch *uint64 // nil when the requirement omits them
	pre          string
}

// A Requirement is a cargo version requirement such as "^1.2", "~0.3.1",
// ">=1, <2", "1.*" or "=1.2.3". The zero value (and "*") matches every
// version that is not a pre-release.
type Requirement struct {
	raw   string
	comps []comparator
}

// String returns the requirement as written.
func (r Requirement) String() string {
	if r.raw == "" {
		return "*"
	}
	return r.raw
}

// ParseRequirement parses a cargo version requirement. A bare version is a
// caret requirement ("1.2.3" means ">=1.2.3, <2.0.0"); a comma means AND;
// the empty string and "*" match any release.
func ParseRequirement(s string) (Requirement, error) {
	req := Requirement{raw: strings.TrimSpace(s)}
	if req.raw == "" || req.raw == "*" {
		return req, nil
	}
	for part := range strings.SplitSeq(req.raw, ",") {
		c, err := parseComparator(strings.TrimSpace(part))
		if err != nil {
			return Requirement{}, fmt.Errorf("%w: %q: %v", ErrInvalidRequirement, s, err)
		}
		if c != nil {
			req.comps = append(req.comps, *c)
		}
	}
	return req, nil
}

func parseComparator(s string) (*comparator, error) {
	if s == "" {
		return nil, fmt.Errorf("empty comparator")
	}
	c := &comparator{op: opCaret}
	explicit := true
	switch {
	case strings.HasPrefix(s, ">="):
		c.op, s = opGreaterEq, s[2:]
	case strings.HasPrefix(s, "<="):
		c.op, s = opLessEq, s[2:]
	case strings.HasPrefix(s, ">"):
		c.op, s = opGreater, s[1:]
	case strings.HasPrefix(s, "<"):
		c.op, s = opLess, s[1:]
	case strings.HasPrefix(s, "="):
		c.op, s = opExact, s[1:]
	case strings.HasPrefix(s, "~"):
		c.op, s = opTilde, s[1:]
	case strings.HasPrefix(s, "^"):
		c.op, s = opCaret, s[1:]
	default:
		explicit = false
	}
	s = strings.TrimSpace(s)
	if s == "*" || s == "x" || s == "X" {
		if explicit && c.op != opExact {
			return nil, fmt.Errorf("operator before a bare wildcard")
		}
		return nil, nil // matches everything
	}
	// Split off pre-release and build metadata.
	core, build, _ := strings.Cut(s, "+")
	if build != "" && !validIdents(build, false) {
		return nil, fmt.Errorf("bad build metadata %q", build)
	}
	core, pre, hasPre := strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) > 3 {
		return nil, fmt.Errorf("%q has more than three version parts", s)
	}
	wild := false
	nums := make([]*uint64, 3)
	for i, p := range parts {
		if p == "*" || p == "x" || p == "X" {
			if i == 0 {
				return nil, fmt.Errorf("wildcard in the major position of %q", s)
			}
			wild = true
			continue
		}
		if wild {
			return nil, fmt.Errorf("a number after a wildcard in %q", s)
		}
		if p == "" || (len(p) > 1 && p[0] == '0') || strings.TrimLeft(p, "0123456789") != "" {
			return nil, fmt.Errorf("bad number %q in %q", p, s)
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q in %q", p, s)
		}
		nums[i] = &n
	}
	c.major = *nums[0]
	c.minor, c.patch = nums[1], nums[2]
	if hasPre {
		if c.patch == nil {
			return nil, fmt.Errorf("a pre-release needs a full major.minor.patch in %q", s)
		}
		if !validIdents(pre, true) {
			return nil, fmt.Errorf("bad pre-release %q", pre)
		}
		c.pre = pre
	}
	if wild && (!explicit || c.op == opExact) {
		// "1.*" and "=1.*"; with another operator the wildcard parts are
		// simply absent (">=1.*" is ">=1").
		c.op = opWildcard
	}
	return c, nil
}

func validIdents(s string, numericNoLeadingZero bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" {
			return false
		}
		numeric := true
		for _, r := range id {
			switch {
			case r >= '0' && r <= '9':
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-':
				numeric = false
			default:
				return false
			}
		}
		if numericNoLeadingZero && numeric && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

// Matches reports whether v satisfies the requirement under cargo's rules,
// including the rule that a pre-release version matches only when some
// comparator names a pre-release of the same major.minor.patch.
func (r Requirement) Matches(v *semver.Version) bool {
	for i := range r.comps {
		if !r.comps[i].matches(v) {
			return false
		}
	}
	if v.Prerelease() == "" {
		return true
	}
	for _, c := range r.comps {
		if c.pre != "" && c.major == v.Major() && c.minor != nil && *c.minor == v.Minor() && c.patch != nil && *c.patch == v.Patch() {
			return true
		}
	}
	return false
}

// comparePre orders pre-release strings by SemVer 2.0 precedence, where the
// empty string (a release) sorts after every pre-release.
func comparePre(a, b string) int {
	va := semver.New(0, 0, 0, a, "")
	vb := semver.New(0, 0, 0, b, "")
	return va.Compare(vb)
}

func (c *comparator) matches(v *semver.Version) bool {
	switch c.op {
	case opExact, opWildcard:
		return c.exact(v)
	case opGreater:
		return c.greater(v)
	case opGreaterEq:
		return c.exact(v) || c.greater(v)
	case opLess:
		return c.less(v)
	case opLessEq:
		return c.exact(v) || c.less(v)
	case opTilde:
		return c.tilde(v)
	default:
		return c.caret(v)
	}
}

func (c *comparator) exact(v *semver.Version) bool {
	if v.Major() != c.major {
		return false
	}
	if c.minor != nil && v.Minor() != *c.minor {
		return false
	}
	if c.patch != nil && v.Patch() != *c.patch {
		return false
	}
	if c.op == opWildcard {
		return true
	}
	return v.Prerelease() == c.pre
}

func (c *comparator) greater(v *semver.Version) bool {
	if v.Major() != c.major {
		return v.Major() > c.major
	}
	if c.minor == nil {
		return false
	}
	if v.Minor() != *c.minor {
		return v.Minor() > *c.minor
	}
	if c.patch == nil {
		return false
	}
	if v.Patch() != *c.patch {
		return v.Patch() > *c.patch
	}
	return comparePre(v.Prerelease(), c.pre) > 0
}

func (c *comparator) less(v *semver.Version) bool {
	if v.Major() != c.major {
		return v.Major() < c.major
	}
	if c.minor == nil {
		return false
	}
	if v.Minor() != *c.minor {
		return v.Minor() < *c.minor
	}
	if c.patch == nil {
		return false
	}
	if v.Patch() != *c.patch {
		return v.Patch() < *c.patch
	}
	return comparePre(v.Prerelease(), c.pre) < 0
}

func (c *comparator) tilde(v *semver.Version) bool {
	if v.Major() != c.major {
		return false
	}
	if c.minor != nil && v.Minor() != *c.minor {
		return false
	}
	if c.patch != nil && v.Patch() != *c.patch {
		return v.Patch() > *c.patch
	}
	return comparePre(v.Prerelease(), c.pre) >= 0
}

func (c *comparator) caret(v *semver.Version) bool {
	if v.Major() != c.major {
		return false
	}
	if c.minor == nil {
		return true
	}
	minor := *c.minor
	if c.patch == nil {
		if c.major > 0 {
			return v.Minor() >= minor
		}
		return v.Minor() == minor
	}
	patch := *c.patch
	switch {
	case c.major > 0:
		if v.Minor() != minor {
			return v.Minor() > minor
		}
		if v.Patch() != patch {
			return v.Patch() > patch
		}
	case minor > 0:
		if v.Minor() != minor {
			return false
		}
		if v.Patch() != patch {
			return v.Patch() > patch
		}
	default:
		if v.Minor() != minor || v.Patch() != patch {
			return false
		}
	}
	return comparePre(v.Prerelease(), c.pre) >= 0
}
