package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"yolop.dev/agent/tokens"
	"yolop.dev/harness/manager"
	"yolop.dev/packaging"
)

// A YesNo asks question on a terminal and reports whether the answer was
// y or yes; tty is false, and nothing was asked, when there is no
// terminal to ask on.
type YesNo func(question string) (yes, tty bool)

// A Confirmation is the yes/no question a line front-end asks once it
// has shown what the answer approves (a contribution summary, a diff, the
// servers of a .mcp.json).
type Confirmation struct {
	// Question is asked as it is: "Install echo? [y/N] ".
	Question string
	// Yes approves without asking (a --yes flag).
	Yes bool
	// Undone says what a refusal leaves: "nothing was changed".
	Undone string
	// Rerun is the command to repeat with --yes, named when there is no
	// terminal; empty names none.
	Rerun string
}

// Ask returns nil when c is approved: in advance (Yes), or by a yes to
// ask. A no declines, and so does the lack of a terminal, with an error
// that says what was not done and, for the latter, how to approve
// without a terminal.
func (c Confirmation) Ask(ask YesNo) error {
	if c.Yes {
		return nil
	}
	switch ok, tty := ask(c.Question); {
	case !tty:
		msg := fmt.Sprintf("there is no terminal to ask on, and %s; read the summary above, then re-run with --yes to approve it", c.Undone)
		if c.Rerun != "" {
			msg += ":\n  " + c.Rerun + " --yes"
		}
		return errors.New(msg)
	case !ok:
		return fmt.Errorf("declined, %s", c.Undone)
	}
	return nil
}

// LineConsent is the [manager.Consent] of a line front-end: it writes the
// proposal (the contribution summary of an install, the diff of an
// update) to out, and what the proposed extension adds to every model
// request ([ManifestCost]; for an update, with what the approved one
// added), then asks "Install <name>? [y/N] " or "Apply this update to
// <name>? [y/N] " as [Confirmation.Ask] does. yes approves in advance,
// saying so on out; rerun is the command to repeat with --yes. A refusal
// wraps [packaging.ErrNotApproved].
func LineConsent(out io.Writer, yes bool, rerun string, ask YesNo) manager.Consent {
	return func(ctx context.Context, p manager.Proposal) error {
		fmt.Fprintln(out, strings.TrimRight(p.Text, "\n"))
		if p.Next != nil {
			line := "  Context: " + ManifestCost(p.Next).String()
			if p.Prev != nil {
				line += fmt.Sprintf(", was ~%s", tokens.Thousands(ManifestCost(p.Prev).Total()))
			}
			fmt.Fprintln(out, line)
		}
		verb := "Install"
		if !p.Fresh {
			verb = "Apply this update to"
		}
		if yes {
			fmt.Fprintf(out, "%s %s: approved with --yes\n", verb, p.Name)
			return nil
		}
		c := Confirmation{Question: fmt.Sprintf("%s %s? [y/N] ", verb, p.Name), Undone: "nothing was changed", Rerun: rerun}
		if err := c.Ask(ask); err != nil {
			return fmt.Errorf("%w: %w", packaging.ErrNotApproved, err)
		}
		return nil
	}
}
