package main

import (
	"strings"
	"testing"
)

// TestColourFlag: status words are plain on a pipe, coloured with
// --color=always (ext list's health, doctor's PASS), never coloured with
// --color=never, and a bad --color value is refused.
func TestColourFlag(t *testing.T) {
	isolate(t)
	t.Setenv("NO_COLOR", "")
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatalf("install: exit %d: %s", code, errOut)
	}

	out, errOut, code := cli(t, "", "ext", "list")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	mustContain(t, "list on a pipe", out, "disabled  ok")
	if strings.Contains(out, "\x1b[") {
		t.Errorf("list on a pipe has escape sequences: %q", out)
	}

	out, _, _ = cli(t, "", "--color=always", "ext", "list")
	mustContain(t, "list --color=always", out, "disabled  "+sgrGood+"ok"+sgrReset)

	out, _, _ = cli(t, "", "--color", "never", "ext", "list")
	if strings.Contains(out, "\x1b[") {
		t.Errorf("list --color=never has escape sequences: %q", out)
	}

	out, errOut, code = cli(t, "", "ext", "doctor", "echo", "--color=always")
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s\n%s", code, out, errOut)
	}
	mustContain(t, "doctor --color=always", out, sgrGood+"PASS"+sgrReset)
	if strings.Contains(out, "PASS"+sgrReset+"\t") || strings.Contains(out, sgrBad) {
		t.Errorf("doctor output: %q", out)
	}

	_, errOut, code = cli(t, "", "--color=sometimes", "ext", "list")
	if code == 0 {
		t.Fatal("--color=sometimes was accepted")
	}
	mustContain(t, "bad --color", errOut, `--color "sometimes": want auto, always or never`)
}

// TestPaintKeepsPadding: padding stays outside the colour, so columns
// align whether or not colour is on, and each kind of word gets its colour.
func TestPaintKeepsPadding(t *testing.T) {
	a := &app{colour: colourAlways}
	a.colourOn = a.colourful()
	for word, want := range map[string]string{
		"ready    ": sgrGood + "ready" + sgrReset + "    ",
		"degraded ": sgrWarn + "degraded" + sgrReset + " ",
		"degraded: server binary not found (srv)": sgrWarn + "degraded: server binary not found (srv)" + sgrReset,
		"refused":          sgrBad + "refused" + sgrReset,
		"manifest changed": sgrBad + "manifest changed" + sgrReset,
		"   ":              "   ",
	} {
		if got := a.paint(word); got != want {
			t.Errorf("paint(%q) = %q, want %q", word, got, want)
		}
	}
	plain := &app{colour: colourNever}
	plain.colourOn = plain.colourful()
	if got := plain.paint("ready    "); got != "ready    " {
		t.Errorf("never: paint = %q", got)
	}
}
