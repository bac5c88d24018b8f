// Package style decides whether a front-end colours status words and how:
// the --color modes (auto, always, never, as cargo and gh spell them), the
// NO_COLOR and TERM=dumb conventions, and the colour of each status word
// (an extension's health or state, a doctor check's status). A front-end
// calls [On] once with its mode and whether its output is a terminal, then
// passes words through a [Painter].
package style

import (
	"fmt"
	"os"
	"strings"

	"yolop.dev/doctor"
)

// Colour modes, as cargo and gh spell them.
const (
	Auto   = "auto"
	Always = "always"
	Never  = "never"
)

// SGR sequences for the three kinds of status word.
const (
	Good  = "\x1b[32m" // green: ok, ready, PASS
	Warn  = "\x1b[33m" // yellow: warning, degraded, off, WARN
	Bad   = "\x1b[31m" // red: refused, crashed, manifest changed, FAIL
	Reset = "\x1b[0m"
)

// CheckMode validates a colour mode given as the --color flag.
func CheckMode(mode string) error {
	switch mode {
	case Auto, Always, Never:
		return nil
	}
	return fmt.Errorf("--color %q: want auto, always or never", mode)
}

// On reports whether status words are coloured: mode always, or auto
// (any other mode) with the output a terminal (tty), NO_COLOR unset or
// empty (no-color.org) and TERM not "dumb".
func On(mode string, tty bool) bool {
	switch mode {
	case Always:
		return true
	case Never:
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return tty
}

// A Painter colours status words when it is true; false leaves every
// word as it is.
type Painter bool

// Word colours a status word (an extension's health or state) by what it
// says; padding around the word is kept outside the colour, so columns
// line up either way.
func (p Painter) Word(word string) string {
	return p.With(For(strings.TrimSpace(word)), word)
}

// Status colours a doctor status word by its status.
func (p Painter) Status(s doctor.Status, word string) string {
	sgr := Bad
	switch s {
	case doctor.Pass:
		sgr = Good
	case doctor.Warn:
		sgr = Warn
	}
	return p.With(sgr, word)
}

// With wraps the word inside padded word in sgr.
func (p Painter) With(sgr, word string) string {
	w := strings.TrimSpace(word)
	if w == "" || !p {
		return word
	}
	i := strings.Index(word, w)
	return word[:i] + sgr + w + Reset + word[i+len(w):]
}

// For picks the colour of a status word; a health with a reason
// ("degraded: server binary not found (…)") is coloured by its first word.
func For(w string) string {
	if head, _, ok := strings.Cut(w, ":"); ok {
		w = head
	}
	switch strings.ToLower(w) {
	case "ok", "ready", "pass":
		return Good
	case "warning", "warn", "degraded", "off", "starting":
		return Warn
	}
	return Bad
}
