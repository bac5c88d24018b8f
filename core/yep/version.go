package yep

import (
	"fmt"
	"strconv"
	"strings"
)

// ProtocolVersion is the YEP version this package speaks.
const ProtocolVersion = "1.1"

// ProtocolMajor and ProtocolMinor are the parts of [ProtocolVersion]. Two
// peers interoperate when their majors are equal; a manifest declaring
// another major is refused at install.
const (
	ProtocolMajor = 1
	ProtocolMinor = 1
)

// MinProtocolVersion is the oldest version this package interoperates with.
// Minors are additive, so any 1.x peer is compatible.
const MinProtocolVersion = "1.0"

// A Version is a YEP protocol version, MAJOR.MINOR.
type Version struct {
	Major, Minor int
}

// Current is [ProtocolVersion] parsed.
var Current = Version{Major: ProtocolMajor, Minor: ProtocolMinor}

// ParseVersion parses "MAJOR.MINOR". A bare "MAJOR" means minor 0.
func ParseVersion(s string) (Version, error) {
	maj, min, hasMinor := strings.Cut(strings.TrimSpace(s), ".")
	if !hasMinor {
		min = "0"
	}
	a, errMaj := parseUint(maj)
	b, errMin := parseUint(min)
	if errMaj != nil || errMin != nil {
		return Version{}, fmt.Errorf("protocol version %q: want MAJOR.MINOR, e.g. %q", s, ProtocolVersion)
	}
	return Version{Major: a, Minor: b}, nil
}

// parseUint parses up to nine decimal digits, with no sign.
func parseUint(s string) (int, error) {
	if len(s) > 9 {
		return 0, strconv.ErrRange
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return int(n), err
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// A VersionError reports peers whose major versions differ.
type VersionError struct {
	Ours, Theirs string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("protocol version %s is incompatible with ours (%s): majors must match", e.Theirs, e.Ours)
}

// Negotiate returns the version two peers speak: majors must match, and the
// lower minor wins because minors only add. The error is a *[VersionError]
// when the majors differ.
func Negotiate(ours Version, theirs string) (Version, error) {
	t, err := ParseVersion(theirs)
	if err != nil {
		return Version{}, err
	}
	if t.Major != ours.Major {
		return Version{}, &VersionError{Ours: ours.String(), Theirs: t.String()}
	}
	if t.Minor < ours.Minor {
		return t, nil
	}
	return ours, nil
}
