package manager

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"yolop.dev/harness/fetch"
	"yolop.dev/packaging"
	"yolop.dev/registry/cratesio"
)

// AdvisorySource returns the advisories a sparse registry ("sparse+URL")
// publishes for crate ([cratesio.Client.Advisories]). An error is shown as
// a warning and never blocks anything.
type AdvisorySource func(ctx context.Context, registry, crate string) ([]cratesio.Advisory, error)

// An AdvisoryStatus is what a registry's advisories say about one
// installed (or about to be installed) crate version.
type AdvisoryStatus struct {
	// Blocking are the critical advisories affecting the version that the
	// user has not allowed: the extension is not started, and an update
	// does not install the version.
	Blocking []cratesio.Advisory `json:"blocking,omitempty"`
	// Allowed are critical advisories the user allowed in settings.toml
	// ([advisories] allow = ["<ext>:<id>"]).
	Allowed []cratesio.Advisory `json:"allowed,omitempty"`
	// Warnings are the affecting advisories of lower severity.
	Warnings []cratesio.Advisory `json:"warnings,omitempty"`
	// Unchecked says why the advisories could not be read (a fetch
	// failure; the copy cached at the last fetch, if any, was used);
	// empty when they were.
	Unchecked string `json:"unchecked,omitempty"`
}

// Blocked reports whether a critical advisory stops the extension.
func (s AdvisoryStatus) Blocked() bool { return len(s.Blocking) > 0 }

// Reason is the one-line reason a blocked extension is not started.
func (s AdvisoryStatus) Reason(name string) string {
	if !s.Blocked() {
		return ""
	}
	a := s.Blocking[0]
	more := ""
	if n := len(s.Blocking) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return fmt.Sprintf("critical advisory %s%s: %s; update it (`yolop ext update %s`), remove it, or allow it with [advisories] allow = [\"%s:%s\"] in settings.toml", a.ID, more, oneLineDesc(a), name, name, a.ID)
}

// Lines describes every advisory of the status, one per line, for
// warnings and `ext list`.
func (s AdvisoryStatus) Lines(name string) []string {
	var out []string
	for _, a := range s.Blocking {
		out = append(out, fmt.Sprintf("%s is not started: critical advisory %s (%s %s): %s%s", name, a.ID, a.Crate, a.Versions, oneLineDesc(a), urlSuffix(a)))
	}
	for _, a := range s.Allowed {
		out = append(out, fmt.Sprintf("%s runs despite critical advisory %s (%s %s), allowed in settings.toml: %s%s", name, a.ID, a.Crate, a.Versions, oneLineDesc(a), urlSuffix(a)))
	}
	for _, a := range s.Warnings {
		out = append(out, fmt.Sprintf("%s has a %s-severity advisory %s (%s %s): %s%s", name, a.Severity, a.ID, a.Crate, a.Versions, oneLineDesc(a), urlSuffix(a)))
	}
	if s.Unchecked != "" {
		out = append(out, fmt.Sprintf("%s: advisories not checked: %s", name, s.Unchecked))
	}
	return out
}

func oneLineDesc(a cratesio.Advisory) string {
	return strings.Join(strings.Fields(a.Description), " ")
}

func urlSuffix(a cratesio.Advisory) string {
	if a.URL == "" {
		return ""
	}
	return " (" + a.URL + ")"
}

// checkAdvisories reads the registry's advisories for crate and sorts the
// ones affecting version by what they do to extension name.
func (m *Manager) checkAdvisories(ctx context.Context, name, registry, crate, version string) AdvisoryStatus {
	var st AdvisoryStatus
	if m.o.Advisories == nil || registry == "" || crate == "" {
		return st
	}
	advs, err := m.o.Advisories(ctx, registry, crate)
	if err != nil {
		st.Unchecked = err.Error() // with a cached copy in advs, which still counts
		if len(advs) == 0 {
			return st
		}
	}
	var allow []string
	if len(advs) > 0 {
		if allow, err = m.o.Settings.AdvisoriesAllow(ctx); err != nil {
			st.Unchecked = err.Error() // a malformed allow list allows nothing
		}
	}
	for _, a := range advs {
		if !a.Affects(version) {
			continue
		}
		switch {
		case a.Critical() && slices.Contains(allow, name+":"+a.ID):
			st.Allowed = append(st.Allowed, a)
		case a.Critical():
			st.Blocking = append(st.Blocking, a)
		default:
			st.Warnings = append(st.Warnings, a)
		}
	}
	return st
}

// Advisories checks the installed version of extension name against its
// registry's advisories. Only crate sources have advisories; any other
// returns the zero status.
func (m *Manager) Advisories(ctx context.Context, name string) (AdvisoryStatus, error) {
	lock, err := m.o.Store.ReadLock(ctx)
	if err != nil {
		return AdvisoryStatus{}, err
	}
	e := lock.Entry(name)
	if e == nil {
		return AdvisoryStatus{}, nil
	}
	return m.entryAdvisories(ctx, e), nil
}

func (m *Manager) entryAdvisories(ctx context.Context, e *packaging.LockEntry) AdvisoryStatus {
	if e == nil || e.Kind != packaging.SourceCrate || m.o.Advisories == nil {
		return AdvisoryStatus{}
	}
	src, err := m.lockedSource(e)
	if err != nil {
		return AdvisoryStatus{}
	}
	reg := cmp.Or(e.Registry, src.Registry)
	return m.checkAdvisories(ctx, e.Name, reg, src.Crate, e.Version)
}

// gateFetch wraps a crate fetch so that a version a critical advisory
// affects is refused before it is unpacked into the store (unless the
// user allowed that advisory for the extension); lower severities become
// warnings of the outcome. The extension name is the one the request
// names, else the source's.
func (m *Manager) gateFetch(src packaging.Source, name string, f fetch.FetchFunc, out *Outcome) fetch.FetchFunc {
	if f == nil || src.Kind != packaging.SourceCrate || m.o.Advisories == nil {
		return f
	}
	return func(ctx context.Context, dir string) (packaging.FetchResult, error) {
		res, err := f(ctx, dir)
		if err != nil {
			return res, err
		}
		ext := name
		if ext == "" {
			ext = strings.TrimPrefix(src.Crate, packaging.CratePrefix)
		}
		st := m.checkAdvisories(ctx, ext, cmp.Or(res.Registry, src.Registry), src.Crate, res.Version)
		if st.Blocked() {
			a := st.Blocking[0]
			return res, fmt.Errorf("%s %s is not installed: critical advisory %s (%s): %s%s; allow it with [advisories] allow = [\"%s:%s\"] in settings.toml", src.Crate, res.Version, a.ID, a.Versions, oneLineDesc(a), urlSuffix(a), ext, a.ID)
		}
		out.Warnings = append(out.Warnings, st.Lines(ext)...)
		return res, nil
	}
}

// listAdvisories fills info's advisories for `list`: a blocking one makes
// the health "blocked: critical advisory <id>".
func (m *Manager) listAdvisories(ctx context.Context, e *packaging.LockEntry, info *Info) {
	st := m.entryAdvisories(ctx, e)
	if len(st.Blocking)+len(st.Allowed)+len(st.Warnings) == 0 && st.Unchecked == "" {
		return
	}
	info.Advisories = &st
	info.Warnings = append(info.Warnings, st.Lines(info.Name)...)
	switch {
	case st.Blocked():
		info.Health = "blocked: critical advisory " + st.Blocking[0].ID
	case len(st.Warnings) > 0 && info.Health == "ok":
		info.Health = "warning"
	}
}
