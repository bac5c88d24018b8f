package main

import (
	"golang.org/x/term"

	"yolop.dev/doctor"
	"yolop.dev/harness/style"
)

// Colour modes of the --color flag (harness/style decides what they mean).
const (
	colourAuto   = style.Auto
	colourAlways = style.Always
	colourNever  = style.Never
)

// SGR sequences for the three kinds of status word.
const (
	sgrGood  = style.Good
	sgrWarn  = style.Warn
	sgrBad   = style.Bad
	sgrReset = style.Reset
)

// colourful reports whether status words are coloured: the --color mode
// and whether stdout is a terminal (see style.On).
func (a *app) colourful() bool {
	return style.On(a.colour, a.ttyOut != nil && term.IsTerminal(int(a.ttyOut.Fd())))
}

// checkColour validates the --color flag's value.
func checkColour(mode string) error { return style.CheckMode(mode) }

// paint colours a status word (an extension's health or state) when
// colour is on.
func (a *app) paint(word string) string { return style.Painter(a.colourOn).Word(word) }

// paintStatus colours a doctor status word by its status.
func (a *app) paintStatus(s doctor.Status, word string) string {
	return style.Painter(a.colourOn).Status(s, word)
}
