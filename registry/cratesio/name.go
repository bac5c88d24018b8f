package cratesio

import (
	"fmt"
	"net/url"
	"strings"
)

// MaxNameLen is the longest crate name crates.io accepts.
const MaxNameLen = 64

// reservedNames are refused as crate names: Windows device names (they
// cannot be files on Windows) and a few crates.io reserves.
var reservedNames = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true,
	"com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true,
	"lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

// ValidateName checks name against the crates.io name rules: 1–64 ASCII
// characters from [A-Za-z0-9_-], starting with a letter, not a reserved
// device name. It must pass before a name is put into a path or URL,
// because cargo's dl templates are expanded by plain string replacement.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: the name is empty", ErrInvalidName)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: %.20q… is %d characters, the limit is %d", ErrInvalidName, name, len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '_'):
		case i == 0:
			return fmt.Errorf("%w: %q must start with an ASCII letter", ErrInvalidName, name)
		default:
			return fmt.Errorf("%w: %q contains %q; only ASCII letters, digits, - and _ are allowed", ErrInvalidName, name, c)
		}
	}
	if reservedNames[strings.ToLower(name)] {
		return fmt.Errorf("%w: %q is a reserved name", ErrInvalidName, name)
	}
	return nil
}

// IndexPath returns the path of name's index file relative to the index
// root, exactly as cargo derives it: the lower-cased name under 1/, 2/,
// 3/{first char}/ or {chars 0-2}/{chars 2-4}/. The name must be valid.
func IndexPath(name string) string {
	n := strings.ToLower(name)
	switch len(n) {
	case 1:
		return "1/" + n
	case 2:
		return "2/" + n
	case 3:
		return "3/" + n[:1] + "/" + n
	default:
		return n[:2] + "/" + n[2:4] + "/" + n
	}
}

// dlPrefix is the {prefix} marker value for name (original case).
func dlPrefix(name string) string {
	switch len(name) {
	case 1:
		return "1"
	case 2:
		return "2"
	case 3:
		return "3/" + name[:1]
	default:
		return name[:2] + "/" + name[2:4]
	}
}

var dlMarkers = []string{"{crate}", "{version}", "{prefix}", "{lowerprefix}", "{sha256-checksum}"}

// ExpandDL expands a config.json dl template for one crate version: every
// {crate}, {version}, {prefix}, {lowerprefix} and {sha256-checksum} marker is
// replaced; when none appears, "/{crate}/{version}/download" is appended,
// as cargo does. name must already be valid.
func ExpandDL(template, name, version, cksum string) string {
	has := false
	for _, m := range dlMarkers {
		if strings.Contains(template, m) {
			has = true
			break
		}
	}
	if !has {
		return strings.TrimSuffix(template, "/") + "/" + name + "/" + version + "/download"
	}
	r := strings.NewReplacer(
		"{crate}", name,
		"{version}", version,
		"{prefix}", dlPrefix(name),
		"{lowerprefix}", strings.ToLower(dlPrefix(name)),
		"{sha256-checksum}", cksum,
	)
	return r.Replace(template)
}

// CratesIO is the sparse registry URL of crates.io.
const CratesIO = "sparse+https://index.crates.io/"

// ParseRegistry parses a sparse registry URL ("sparse+https://host/path/")
// and returns the index base URL with the "sparse+" stripped and a trailing
// slash. An empty string means crates.io.
func ParseRegistry(registry string) (*url.URL, error) {
	if registry == "" {
		registry = CratesIO
	}
	rest, ok := strings.CutPrefix(registry, "sparse+")
	if !ok {
		return nil, fmt.Errorf("%w: %q must start with sparse+https:// (or sparse+http:// for a local registry)", ErrInvalidRegistry, registry)
	}
	u, err := url.Parse(rest)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrInvalidRegistry, registry, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("%w: %q: scheme %q is not http or https", ErrInvalidRegistry, registry, u.Scheme)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: %q needs a host and no user info, query or fragment", ErrInvalidRegistry, registry)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u, nil
}
