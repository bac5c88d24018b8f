package repl

import (
	"fmt"
	"strings"

	"yolop.dev/core/yep"
)

// hookReportText is the session's closing hook report as lines: each
// subscription that never fired, timed out or failed.
func hookReportText(d yep.HookReportData) string {
	if len(d.Hooks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("hooks at the end of the session:")
	for _, h := range d.Hooks {
		fmt.Fprintf(&b, "\n  %s %q of %s: ", h.Event, h.Matcher, h.Capability)
		if h.Fired == 0 {
			b.WriteString("never fired")
			continue
		}
		fmt.Fprintf(&b, "fired %d", h.Fired)
		if h.Timeouts > 0 {
			fmt.Fprintf(&b, ", timed out %d", h.Timeouts)
		}
		if h.Failures > 0 {
			fmt.Fprintf(&b, ", failed %d", h.Failures)
		}
		if h.LastError != "" {
			b.WriteString(": " + h.LastError)
		}
	}
	return b.String()
}
