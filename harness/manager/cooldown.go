package manager

import (
	"cmp"
	"context"
	"time"

	"yolop.dev/harness/fetch"
	"yolop.dev/harness/firstseen"
	"yolop.dev/packaging"
)

// UpdateOptions tune [Manager.UpdateWith].
type UpdateOptions struct {
	// Registry updates a crate from another sparse registry ("sparse+URL";
	// empty means the recorded one).
	Registry string
	// Now installs the newest version at once, without the update
	// cooldown; the outcome says so.
	Now bool
}

// A cooldownRequest is what an update asks of the cooldown.
type cooldownRequest struct {
	bypass    bool
	installed string // the installed crate version or git commit
	notes     []string
}

func updateCooldown(e *packaging.LockEntry, o UpdateOptions) *cooldownRequest {
	installed := e.Version
	if e.Kind == packaging.SourceGit {
		installed = e.Commit
	}
	return &cooldownRequest{bypass: o.Now, installed: installed}
}

// gate is the fetch gate of an update (req.cooldown set): it records what
// the update sees and installs only what was first seen at least [update]
// cooldown ago. A first install records nothing: one that fails or is
// refused leaves nothing behind, a fresh config directory included, and
// what an install pins is the user's own choice, not an update's. Nil
// without a first-seen record.
func (m *Manager) gate(ctx context.Context, req InstallRequest, out *Outcome) fetch.Gate {
	if m.o.FirstSeen == nil || req.cooldown == nil {
		return nil
	}
	g := &firstseen.Gate{Store: m.o.FirstSeen, Now: m.o.Now}
	if c := req.cooldown; c != nil {
		d, err := m.o.Settings.UpdateCooldown(ctx, firstseen.DefaultCooldown)
		if err != nil {
			return errGate{err}
		}
		g.Hold, g.Bypass, g.Installed, g.Cooldown = true, c.bypass, c.installed, d
		g.Note = func(s string) {
			c.notes = append(c.notes, s)
			out.Notes = append(out.Notes, s)
		}
	}
	return g
}

// held is the outcome of an update the cooldown held back entirely.
func (m *Manager) held(ctx context.Context, e *packaging.LockEntry, req InstallRequest) *Outcome {
	out := &Outcome{Name: e.Name, Source: e.Source, Kind: e.Kind, Unchanged: true, Held: true, Entry: *e}
	if req.cooldown != nil {
		out.Notes = req.cooldown.notes
	}
	if se, ok, err := m.o.Settings.Entry(ctx, e.Name); err == nil {
		out.Enabled = ok && se.Enabled
	}
	return out
}

// recordInstalled records the version (or commit) an install or update
// just committed as seen now, unless seen before: the mark a later
// update's wait for a branch's commits counts from.
func (m *Manager) recordInstalled(ctx context.Context, e *packaging.LockEntry) error {
	kind, key, item := m.seenKey(e)
	if m.o.FirstSeen == nil || key == "" {
		return nil
	}
	_, err := m.o.FirstSeen.Observe(ctx, kind, key, []string{item}, m.now())
	return err
}

// seenKey is where the first-seen record keeps e's versions: the kind, the
// key (registry and crate, or URL and ref) and e's own item (its version
// or commit). key is "" for a source the cooldown does not apply to.
func (m *Manager) seenKey(e *packaging.LockEntry) (kind, key, item string) {
	src, err := m.lockedSource(e)
	if err != nil {
		return "", "", ""
	}
	switch src.Kind {
	case packaging.SourceCrate:
		reg := cmp.Or(src.Registry, e.Registry, packaging.CratesIORegistry)
		return firstseen.Crate, firstseen.CrateKey(reg, src.Crate), e.Version
	case packaging.SourceGit:
		if len(src.Rev) == 40 {
			return "", "", "" // a pinned commit does not move
		}
		return firstseen.Git, firstseen.GitKey(src.URL, src.Rev), e.Commit
	}
	return "", "", ""
}

// Waiting lists the updates of an installed extension still in their
// cooldown, newest first, from the first-seen record (what the last
// install, update or check saw; nothing is fetched).
func (m *Manager) Waiting(ctx context.Context, e *packaging.LockEntry, eligible func(version string) bool) ([]firstseen.Wait, error) {
	if m.o.FirstSeen == nil {
		return nil, nil
	}
	kind, key, item := m.seenKey(e)
	if key == "" {
		return nil, nil
	}
	d, err := m.o.Settings.UpdateCooldown(ctx, firstseen.DefaultCooldown)
	if err != nil {
		return nil, err
	}
	if kind == firstseen.Git {
		eligible = nil
	}
	return m.o.FirstSeen.Waiting(ctx, kind, key, item, m.now(), d, eligible)
}

func (m *Manager) now() time.Time {
	if m.o.Now != nil {
		return m.o.Now()
	}
	return time.Now()
}

// errGate fails every fetch with err (a malformed [update] cooldown).
type errGate struct{ err error }

func (g errGate) Crate(context.Context, string, string, []fetch.CrateVersion) (string, error) {
	return "", g.err
}

func (g errGate) Git(context.Context, string, string, string) (string, error) {
	return "", g.err
}
