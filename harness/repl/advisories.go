package repl

import (
	"context"
	"fmt"
)

// blockedStatus reports, for /status, each enabled extension that is not
// running because a critical registry advisory affects its installed
// version (see manager.AdvisoryStatus): it has no session line of its own.
func (r *REPL) blockedStatus(ctx context.Context) {
	if r.o.Manager == nil {
		return
	}
	m, err := r.o.Manager()
	if err != nil {
		return
	}
	names, err := m.Settings().Enabled(ctx)
	if err != nil {
		return
	}
	for _, name := range names {
		if _, running := r.o.Session.Extension(name); running {
			continue
		}
		st, err := m.Advisories(ctx, name)
		if err != nil || !st.Blocked() {
			continue
		}
		a := st.Blocking[0]
		fields := map[string]any{"extension": name, "state": "blocked", "reason": st.Reason(name), "advisory": a.ID, "severity": a.Severity, "description": a.Description}
		r.event("status", fields, fmt.Sprintf("%-12s %s not started\n  %s", name, r.o.Paint(fmt.Sprintf("%-9s", "blocked")), st.Reason(name)))
	}
}
