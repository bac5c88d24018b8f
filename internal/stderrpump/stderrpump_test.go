package stderrpump

import (
	"bytes"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/time/rate"
)

// FuzzStderrLines feeds arbitrary server stderr through the pump: every
// kept line must be bounded, valid UTF-8 and free of control characters,
// and the pump must keep one line per input line.
func FuzzStderrLines(f *testing.F) {
	for _, seed := range []string{
		"",
		"one line\n",
		"no newline at end",
		"crlf\r\nline two\r\n",
		"\n\n\n",
		strings.Repeat("a", 100) + "\nshort\n",
		strings.Repeat("b", 5000),
		"\x1b[2J\x07bell\x00nul\n",
		"\xff\xfe invalid utf-8 \xc3\n",
		"Authorization: Bearer abc\nset-cookie: x=y\n",
		"token=hunter22 and hunter22\n",
	} {
		f.Add([]byte(seed))
	}
	const maxLine = 32
	f.Fuzz(func(t *testing.T, in []byte) {
		tl := NewTail(1 << 20)
		p := &Pump{
			R:       bytes.NewReader(in),
			Log:     hclog.NewNullLogger(),
			Level:   hclog.Info,
			MaxLine: maxLine,
			Limiter: rate.NewLimiter(rate.Inf, 1),
			Redact:  NewRedactor([]string{"hunter22"}),
			Tail:    tl,
		}
		p.Run()
		lines := tl.Snapshot()
		want := bytes.Count(in, []byte("\n"))
		if len(in) > 0 && in[len(in)-1] != '\n' {
			want++
		}
		if len(lines) != want {
			t.Fatalf("%d lines kept for %d input lines", len(lines), want)
		}
		for _, l := range lines {
			if !utf8.ValidString(l) {
				t.Errorf("invalid UTF-8 kept: %q", l)
			}
			if strings.IndexFunc(l, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) >= 0 {
				t.Errorf("control character kept: %q", l)
			}
			if strings.Contains(l, "hunter22") {
				t.Errorf("secret kept: %q", l)
			}
			// Each kept byte may become a 3-byte U+FFFD; the note is short.
			if len(l) > 3*maxLine+len(" …[99999999999 more bytes]") {
				t.Errorf("line of %d bytes exceeds the cap: %q", len(l), l)
			}
		}
	})
}
