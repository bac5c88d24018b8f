package packaging

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ErrEngine means a manifest's engines field asks for a host this is not:
// a newer yolop, say. Such a package is refused at install and not run.
var ErrEngine = errors.New("engine requirement not met")

// EngineYolop is the engines key naming the yolop host.
const EngineYolop = "yolop"

// CheckEngines checks the manifest's engines.yolop requirement (npm-style
// comparisons: ">=0.6", "^1.2", ">=1.0, <2") against host, the running
// yolop's version. A development or pre-release build ("0.7.0-dev") is
// compared by its base version, so a dev build of 0.7 satisfies ">=0.7".
// An empty host skips the check; other engines keys are ignored (they name
// other hosts). A requirement that does not parse is an error too: the
// package cannot say what it needs.
func (m *Manifest) CheckEngines(host string) error {
	req, ok := m.Engines[EngineYolop]
	if !ok || host == "" {
		return nil
	}
	c, err := semver.NewConstraint(req)
	if err != nil {
		return fmt.Errorf("extension %s: engines.yolop %q is not a version requirement (%v): %w", m.Name, req, err, ErrEngine)
	}
	v, err := semver.NewVersion(host)
	if err != nil {
		return fmt.Errorf("extension %s: this yolop's version %q does not parse: %w", m.Name, host, err)
	}
	base, _ := v.SetPrerelease("")
	base, _ = base.SetMetadata("")
	if !c.Check(&base) {
		return fmt.Errorf("extension %s needs yolop %s, this is %s: %w; update yolop, or install an older version of %s", m.Name, req, host, ErrEngine, m.Name)
	}
	return nil
}

// EngineNames lists the engines a manifest names, sorted.
func (m *Manifest) EngineNames() []string {
	names := make([]string, 0, len(m.Engines))
	for k := range m.Engines {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func engineLine(m *Manifest) string {
	if len(m.Engines) == 0 {
		return ""
	}
	var parts []string
	for _, k := range m.EngineNames() {
		parts = append(parts, k+" "+m.Engines[k])
	}
	return strings.Join(parts, ", ")
}
