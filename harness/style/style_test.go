package style

import (
	"testing"

	"yolop.dev/doctor"
)

func TestCheckMode(t *testing.T) {
	for _, m := range []string{Auto, Always, Never} {
		if err := CheckMode(m); err != nil {
			t.Errorf("CheckMode(%q): %v", m, err)
		}
	}
	if err := CheckMode("sometimes"); err == nil || err.Error() != `--color "sometimes": want auto, always or never` {
		t.Errorf("CheckMode(sometimes) = %v", err)
	}
}

func TestOn(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	for _, tc := range []struct {
		mode string
		tty  bool
		want bool
	}{
		{Always, false, true}, {Never, true, false}, {Auto, true, true}, {Auto, false, false},
	} {
		if got := On(tc.mode, tc.tty); got != tc.want {
			t.Errorf("On(%q, %v) = %v, want %v", tc.mode, tc.tty, got, tc.want)
		}
	}
	t.Setenv("NO_COLOR", "1")
	if On(Auto, true) {
		t.Error("auto with NO_COLOR set is on")
	}
	if !On(Always, false) {
		t.Error("always with NO_COLOR set is off")
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "dumb")
	if On(Auto, true) {
		t.Error("auto with TERM=dumb is on")
	}
}

func TestPainter(t *testing.T) {
	p := Painter(true)
	for word, want := range map[string]string{
		"ready    ": Good + "ready" + Reset + "    ",
		"  off":     "  " + Warn + "off" + Reset,
		"degraded: server binary not found (srv)": Warn + "degraded: server binary not found (srv)" + Reset,
		"crashed":          Bad + "crashed" + Reset,
		"manifest changed": Bad + "manifest changed" + Reset,
		"   ":              "   ",
	} {
		if got := p.Word(word); got != want {
			t.Errorf("Word(%q) = %q, want %q", word, got, want)
		}
	}
	for s, want := range map[doctor.Status]string{doctor.Pass: Good, doctor.Warn: Warn, doctor.Fail: Bad} {
		if got := p.Status(s, "X "); got != want+"X"+Reset+" " {
			t.Errorf("Status(%s) = %q", s, got)
		}
	}
	if got := Painter(false).Word("ready "); got != "ready " {
		t.Errorf("off: Word = %q", got)
	}
	if got := Painter(false).Status(doctor.Fail, "FAIL"); got != "FAIL" {
		t.Errorf("off: Status = %q", got)
	}
}
