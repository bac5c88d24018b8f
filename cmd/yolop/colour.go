package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"yolop.dev/doctor"
)

// Colour modes of the --color flag, as cargo and gh spell them.
const (
	colourAuto   = "auto"
	colourAlways = "always"
	colourNever  = "never"
)

// SGR sequences for the three kinds of status word.
const (
	sgrGood  = "\x1b[32m" // green: ok, ready, PASS
	sgrWarn  = "\x1b[33m" // yellow: warning, degraded, off, WARN
	sgrBad   = "\x1b[31m" // red: refused, crashed, manifest changed, FAIL
	sgrReset = "\x1b[0m"
)

// colourful reports whether status words are coloured: --color=always,
// or auto (the default) with stdout a terminal, NO_COLOR unset or empty
// (no-color.org) and TERM not "dumb".
func (a *app) colourful() bool {
	switch a.colour {
	case colourAlways:
		return true
	case colourNever:
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return a.ttyOut != nil && term.IsTerminal(int(a.ttyOut.Fd()))
}

// checkColour validates the --color flag's value.
func checkColour(mode string) error {
	switch mode {
	case colourAuto, colourAlways, colourNever:
		return nil
	}
	return fmt.Errorf("--color %q: want auto, always or never", mode)
}

// paint colours a status word (an extension's health or state) when
// colour is on; padding around the word is kept outside the colour, so
// columns line up either way.
func (a *app) paint(word string) string {
	return a.paintWith(sgrFor(strings.TrimSpace(word)), word)
}

// paintStatus colours a doctor status word by its status.
func (a *app) paintStatus(s doctor.Status, word string) string {
	sgr := sgrBad
	switch s {
	case doctor.Pass:
		sgr = sgrGood
	case doctor.Warn:
		sgr = sgrWarn
	}
	return a.paintWith(sgr, word)
}

func (a *app) paintWith(sgr, word string) string {
	w := strings.TrimSpace(word)
	if w == "" || !a.colourOn {
		return word
	}
	i := strings.Index(word, w)
	return word[:i] + sgr + w + sgrReset + word[i+len(w):]
}

// sgrFor picks the colour of a status word; a health with a reason
// ("degraded: server binary not found (…)") is coloured by its first word.
func sgrFor(w string) string {
	if head, _, ok := strings.Cut(w, ":"); ok {
		w = head
	}
	switch strings.ToLower(w) {
	case "ok", "ready", "pass":
		return sgrGood
	case "warning", "warn", "degraded", "off", "starting":
		return sgrWarn
	}
	return sgrBad
}
