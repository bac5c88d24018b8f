package cratesio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ExtensionCratePrefix is the crate-name prefix of yolop extensions on
// crates.io: crate "yolop-extension-lsp" is extension "lsp".
const ExtensionCratePrefix = "yolop-extension-"

// ParseSource parses an install source of the form
// "crates.io:<crate>[@<req>]" or the bare shorthand "<name>[@<req>]", which
// means crate "yolop-extension-<name>" (a bare name that already carries
// the prefix is taken as is). The requirement follows [ParseRequirement]:
// "@0.1" and "@0.1.2" are caret requirements, "@=0.1.2" is exact; empty
// means the newest release. Both parts are validated.
func ParseSource(src string) (crate, req string, err error) {
	rest, explicit := strings.CutPrefix(src, "crates.io:")
	crate, req, _ = strings.Cut(rest, "@")
	if !explicit && !strings.HasPrefix(crate, ExtensionCratePrefix) {
		crate = ExtensionCratePrefix + crate
	}
	if err := ValidateName(crate); err != nil {
		return "", "", fmt.Errorf("install source %q: %w", src, err)
	}
	if _, err := ParseRequirement(req); err != nil {
		return "", "", fmt.Errorf("install source %q: %w", src, err)
	}
	return crate, req, nil
}

// ExtensionName returns the extension name of an extension crate
// ("yolop-extension-echo" → "echo"), or "" when crate lacks the prefix.
func ExtensionName(crate string) string {
	name, ok := strings.CutPrefix(crate, ExtensionCratePrefix)
	if !ok {
		return ""
	}
	return name
}

// CrateFileName is the conventional file name of a packed crate,
// "<name>-<version>.crate".
func CrateFileName(name, version string) string {
	return name + "-" + version + ".crate"
}

// SweepStaging removes the ".tmp-*" entries that an interrupted [Unpack],
// [Client.Fetch] or [Client.ProvisionArtifact] left in dir (after a crash
// or kill -9), and returns their names. Call it at startup, under the
// store's lock, before installing into dir; a missing dir is not an error.
func SweepStaging(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweeping staging directories in %s: %w", dir, err)
	}
	var removed []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".tmp-") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return removed, fmt.Errorf("sweeping %s: %w", filepath.Join(dir, e.Name()), err)
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}
