package firstseen

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"yolop.dev/harness/fetch"
)

// DefaultCooldown is how long an update waits when settings.toml does not
// say: [update] cooldown.
const DefaultCooldown = 48 * time.Hour

// A Gate records what each fetch sees and, for an update, holds back
// what has not been seen for Cooldown. It implements [fetch.Gate].
type Gate struct {
	Store *Store
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Cooldown is how long a version or commit must have been seen before
	// an update installs it; 0 turns the wait off.
	Cooldown time.Duration
	// Hold applies the cooldown (an update). False only records (a first
	// install is not delayed).
	Hold bool
	// Bypass installs the newest at once (--now), saying so.
	Bypass bool
	// Installed is the installed version (a crate) or commit (git).
	Installed string
	// Note receives what the user should read: what waits and until when,
	// or what is installed without the wait.
	Note func(string)
}

var _ fetch.Gate = (*Gate)(nil)

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Gate) note(format string, args ...any) {
	if g.Note != nil {
		g.Note(fmt.Sprintf(format, args...))
	}
}

// Until renders the end of a wait as the user reads it.
func Until(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// Crate implements [fetch.Gate].
func (g *Gate) Crate(ctx context.Context, registry, crate string, versions []fetch.CrateVersion) (string, error) {
	all := make([]string, 0, len(versions))
	for _, v := range versions {
		all = append(all, v.Version)
	}
	now := g.now()
	seen, err := g.Store.Observe(ctx, Crate, CrateKey(registry, crate), all, now)
	if err != nil || !g.Hold {
		return "", err
	}
	// The eligible versions newer than the installed one, newest first.
	var newer []string
	for _, v := range versions {
		if v.Eligible && (g.Installed == "" || CompareVersions(v.Version, g.Installed) > 0) {
			newer = append(newer, v.Version)
		}
	}
	if len(newer) == 0 {
		return "", nil
	}
	slices.SortFunc(newer, func(a, b string) int { return CompareVersions(b, a) })
	wait := func(v string) time.Time { return seen[v].Add(g.Cooldown) }
	if g.Bypass {
		if now.Before(wait(newer[0])) {
			g.note("installing %s %s without the cooldown (--now; it would wait until %s)", crate, newer[0], Until(wait(newer[0])))
		}
		return newer[0], nil
	}
	for i, v := range newer {
		if now.Before(wait(v)) {
			continue
		}
		if i > 0 {
			g.note("update %s waits until %s (cooldown %s); installing %s, which has waited", newer[0], Until(wait(newer[0])), FormatCooldown(g.Cooldown), v)
		}
		return v, nil
	}
	g.note("update %s waits until %s (cooldown %s); %s stays at %s (`yolop ext update --now` installs it at once)", newer[0], Until(wait(newer[0])), FormatCooldown(g.Cooldown), crate, g.Installed)
	return "", fmt.Errorf("%w: %s %s waits until %s", fetch.ErrHeld, crate, newer[0], Until(wait(newer[0])))
}

// Git implements [fetch.Gate]. A ref that is a full commit id is what the
// user named and is not held.
func (g *Gate) Git(ctx context.Context, url, rev, commit string) (string, error) {
	if isCommit(rev) {
		return "", nil
	}
	now := g.now()
	seen, err := g.Store.Observe(ctx, Git, GitKey(url, rev), []string{commit}, now)
	if err != nil || !g.Hold || commit == g.Installed {
		return "", err
	}
	until := seen[commit].Add(g.Cooldown)
	if !now.Before(until) {
		return "", nil
	}
	short := commit[:min(12, len(commit))]
	if g.Bypass {
		g.note("installing commit %s without the cooldown (--now; it would wait until %s)", short, Until(until))
		return "", nil
	}
	// The tip waits: move to the newest commit the ref pointed at since
	// the installed one that has waited, if any.
	pick := ""
	if inst, ok := seen[g.Installed]; ok {
		for c, t := range seen {
			if c == commit || c == g.Installed || !t.After(inst) || now.Before(t.Add(g.Cooldown)) {
				continue
			}
			if pick == "" || t.After(seen[pick]) {
				pick = c
			}
		}
	}
	if pick != "" {
		g.note("update to commit %s waits until %s (cooldown %s); installing commit %s, which has waited", short, Until(until), FormatCooldown(g.Cooldown), pick[:12])
		return pick, nil
	}
	g.note("update to commit %s waits until %s (cooldown %s); the installed commit stays (`yolop ext update --now` installs it at once)", short, Until(until), FormatCooldown(g.Cooldown))
	return "", fmt.Errorf("%w: commit %s waits until %s", fetch.ErrHeld, short, Until(until))
}

// FormatCooldown renders a cooldown the way settings.toml spells it
// ("48h", "90m", "0").
func FormatCooldown(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// A Wait is an update still in its cooldown.
type Wait struct {
	// Version is a crate version, or a commit of a git ref.
	Version  string        `json:"version"`
	Until    time.Time     `json:"until"`
	Cooldown time.Duration `json:"cooldown"`
}

// Text is the line `yolop ext info` shows.
func (w Wait) Text() string {
	v := w.Version
	if isCommit(v) {
		v = "to commit " + v[:12]
	}
	return fmt.Sprintf("update %s waits until %s (cooldown %s)", v, Until(w.Until), FormatCooldown(w.Cooldown))
}

// Waiting returns the updates recorded for a crate (kind [Crate]) newer
// than installed, or for a git ref (kind [Git]) seen after the installed
// commit, that are still in their cooldown at now, newest first. It reads
// the record only: what was seen by the last install, update or check.
// eligible, if set, filters crate versions (the source's requirement).
func (s *Store) Waiting(ctx context.Context, kind, key, installed string, now time.Time, cooldown time.Duration, eligible func(string) bool) ([]Wait, error) {
	seen, err := s.Seen(ctx, kind, key)
	if err != nil || cooldown == 0 {
		return nil, err
	}
	var out []Wait
	for v, t := range seen {
		if v == installed || !now.Before(t.Add(cooldown)) {
			continue
		}
		switch kind {
		case Crate:
			if CompareVersions(v, installed) <= 0 || (eligible != nil && !eligible(v)) {
				continue
			}
		case Git:
			if inst, ok := seen[installed]; ok && !t.After(inst) {
				continue
			}
		}
		out = append(out, Wait{Version: v, Until: t.Add(cooldown), Cooldown: cooldown})
	}
	slices.SortFunc(out, func(a, b Wait) int {
		if kind == Crate {
			return CompareVersions(b.Version, a.Version)
		}
		return b.Until.Compare(a.Until)
	})
	return out, nil
}

func isCommit(rev string) bool {
	if len(rev) != 40 {
		return false
	}
	for _, c := range rev {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// CompareVersions orders two SemVer 2.0 versions (build metadata is
// ignored; a pre-release is lower than its release). A version that does
// not parse orders below every one that does.
func CompareVersions(a, b string) int {
	pa, oka := parseVersion(a)
	pb, okb := parseVersion(b)
	switch {
	case !oka || !okb:
		return boolCmp(oka, okb)
	}
	for i := range 3 {
		if c := compareUint(pa.core[i], pb.core[i]); c != 0 {
			return c
		}
	}
	switch {
	case pa.pre == "" && pb.pre == "":
		return 0
	case pa.pre == "":
		return 1
	case pb.pre == "":
		return -1
	}
	as, bs := strings.Split(pa.pre, "."), strings.Split(pb.pre, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		an, aerr := strconv.ParseUint(as[i], 10, 64)
		bn, berr := strconv.ParseUint(bs[i], 10, 64)
		var c int
		switch {
		case aerr == nil && berr == nil:
			c = compareUint(an, bn)
		case aerr == nil:
			c = -1 // numeric identifiers are lower
		case berr == nil:
			c = 1
		default:
			c = strings.Compare(as[i], bs[i])
		}
		if c != 0 {
			return c
		}
	}
	return compareUint(uint64(len(as)), uint64(len(bs)))
}

type version struct {
	core [3]uint64
	pre  string
}

func parseVersion(s string) (version, bool) {
	s, _, _ = strings.Cut(s, "+")
	s, pre, _ := strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return version{}, false
	}
	var v version
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return version{}, false
		}
		v.core[i] = n
	}
	v.pre = pre
	return v, true
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
