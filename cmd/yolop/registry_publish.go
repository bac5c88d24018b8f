package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"yolop.dev/registry/cratesio"
)

// crateMeta is what publish reads from a .crate before adding it: its
// name and version and the prebuilt artifacts its metadata pins.
type crateMeta struct {
	Name, Version string
	// Artifacts maps a target triple to its pinned artifact, from
	// Cargo.toml's [package.metadata.yolop.artifacts] and plugin.json's
	// yolop.artifacts.
	Artifacts map[string]cratesio.ArtifactSpec
}

// maxCrateMetaFile caps Cargo.toml and plugin.json read from a crate.
const maxCrateMetaFile = 1 << 20

var semverRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// splitCrateDir splits a crate's top-level "name-version" directory.
func splitCrateDir(s string) (name, version string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '-' && cratesio.ValidateName(s[:i]) == nil && semverRE.MatchString(s[i+1:]) {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// readCrateMeta reads name, version and artifact metadata from a .crate
// without unpacking it.
func readCrateMeta(file string) (*crateMeta, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseCrateMeta(f)
}

// parseCrateMeta is [readCrateMeta] over the .crate bytes in r.
func parseCrateMeta(r io.Reader) (*crateMeta, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a .crate (gzip): %w; write one with `yolop ext pack`", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var top string
	var cargo, plugin []byte
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not a .crate (tar): %w", err)
		}
		first, rest, _ := strings.Cut(hdr.Name, "/")
		if top == "" {
			top = first
		}
		if first != top || hdr.Typeflag != tar.TypeReg || (rest != "Cargo.toml" && rest != "plugin.json") {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxCrateMetaFile+1))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", hdr.Name, err)
		}
		if len(b) > maxCrateMetaFile {
			return nil, fmt.Errorf("%s is over %d bytes", hdr.Name, maxCrateMetaFile)
		}
		if rest == "Cargo.toml" {
			cargo = b
		} else {
			plugin = b
		}
	}
	name, version, ok := splitCrateDir(top)
	if !ok {
		return nil, fmt.Errorf("the crate's top-level directory %q is not <name>-<version>", top)
	}
	m := &crateMeta{Name: name, Version: version, Artifacts: map[string]cratesio.ArtifactSpec{}}
	if cargo != nil {
		am, err := cratesio.ParseArtifactMetadata(cargo)
		if err != nil {
			return nil, err
		}
		for t, s := range am.Yolop {
			m.Artifacts[t] = s
		}
	}
	if plugin != nil {
		var doc struct {
			Yolop struct {
				Artifacts map[string]cratesio.ArtifactSpec `json:"artifacts"`
			} `json:"yolop"`
		}
		if err := json.Unmarshal(plugin, &doc); err != nil {
			return nil, fmt.Errorf("plugin.json: %w", err)
		}
		for t, s := range doc.Yolop.Artifacts {
			if _, ok := m.Artifacts[t]; !ok {
				m.Artifacts[t] = s
			}
		}
	}
	return m, nil
}

// checkPublishArtifacts checks the --artifact files against the crate's
// metadata before anything is published: every artifact named by a plain
// relative file name (published next to the crate) must be given and must
// have the pinned SHA-256. A given file the metadata does not name, or an
// artifact hosted elsewhere, is only a warning.
func checkPublishArtifacts(m *crateMeta, files []string) (warnings []string, err error) {
	byName := map[string]string{}
	for _, f := range files {
		base := filepath.Base(f)
		if prev, dup := byName[base]; dup {
			return nil, fmt.Errorf("--artifact %s and %s have the same file name; they would overwrite each other next to the crate", prev, f)
		}
		byName[base] = f
	}
	named := map[string]bool{}
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(m.Artifacts)) {
		s := m.Artifacts[t]
		if s.URL == "" || strings.Contains(s.URL, "://") || strings.Contains(s.URL, "{") || strings.ContainsAny(s.URL, `/\?#`) {
			warnings = append(warnings, fmt.Sprintf("the %s artifact %q is not a file published next to the crate; make sure it is hosted there", t, s.URL))
			continue
		}
		named[s.URL] = true
		f, ok := byName[s.URL]
		if !ok {
			errs = append(errs, fmt.Errorf("the crate pins artifact %s for %s, but no --artifact %s was given; an install on %s would fail with a 404", s.URL, t, s.URL, t))
			continue
		}
		sum, err := sha256File(f)
		if err != nil {
			return nil, err
		}
		if sum != strings.ToLower(s.SHA256) {
			errs = append(errs, fmt.Errorf("--artifact %s has sha256 %s, but the crate pins %s for %s; re-run `yolop ext pack` so the crate and its artifacts come from the same build", f, sum, s.SHA256, t))
		}
	}
	for _, base := range slices.Sorted(maps.Keys(byName)) {
		if !named[base] {
			warnings = append(warnings, fmt.Sprintf("--artifact %s is not named in the crate's metadata; installs will not use it", byName[base]))
		}
	}
	return warnings, errors.Join(errs...)
}
