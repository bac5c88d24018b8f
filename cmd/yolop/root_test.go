package main

import (
	"strings"
	"testing"
)

// TestBadLogLevelWarnsOnce: an unknown YOLOP_LOG value gets one warning
// on stderr naming the accepted values, and the command still runs at the
// default level; a known value gets none.
func TestBadLogLevelWarnsOnce(t *testing.T) {
	isolate(t)
	t.Setenv("YOLOP_LOG", "loud")
	out, errOut, code := cli(t, "", "version")
	if code != 0 || !strings.Contains(out, version) {
		t.Fatalf("version with a bad YOLOP_LOG: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := strings.Count(errOut, "YOLOP_LOG"); n != 1 {
		t.Errorf("stderr names YOLOP_LOG %d times, want one warning:\n%s", n, errOut)
	}
	for _, want := range []string{`"loud"`, "trace, debug, info, warn, error, off", "warn"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the warning lacks %q:\n%s", want, errOut)
		}
	}
	t.Setenv("YOLOP_LOG", "error")
	if _, errOut, code := cli(t, "", "version"); code != 0 || errOut != "" {
		t.Errorf("a valid YOLOP_LOG: exit %d, stderr %q", code, errOut)
	}
}
