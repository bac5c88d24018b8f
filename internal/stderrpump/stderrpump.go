// Package stderrpump reads a capability server's stderr for a transport:
// line by line, each line capped, made safe to log (valid UTF-8, no
// control characters, secrets and credential headers redacted), kept in a
// tail for crash reports and logged under a rate limit. transport/stdio
// and transport/wasm both use it, so a server's stderr is treated the same
// whichever transport runs it.
package stderrpump

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/time/rate"
)

// A Tail keeps the last lines written to it.
type Tail struct {
	mu    sync.Mutex
	lines []string // ring buffer of cap n
	next  int      // index of the oldest line once full
	n     int
}

// NewTail returns a tail that keeps the last n lines.
func NewTail(n int) *Tail {
	n = max(n, 0)
	return &Tail{n: n, lines: make([]string, 0, n)}
}

// Add keeps line, dropping the oldest line once full.
func (t *Tail) Add(line string) {
	if t.n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) < t.n {
		t.lines = append(t.lines, line)
		return
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % t.n
}

// Snapshot returns the kept lines, oldest first, in a new slice.
func (t *Tail) Snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.lines))
	out = append(out, t.lines[t.next:]...)
	return append(out, t.lines[:t.next]...)
}

// headerRedaction hides credentials in HTTP header lines, as cargo does.
var headerRedaction = regexp.MustCompile(`(?i)\b(proxy-authorization|authorization|set-cookie|cookie)\s*:.*`)

// A Pump reads a server's stderr line by line, caps each line, redacts
// it, keeps it in the tail and logs it under a rate limit.
type Pump struct {
	R       io.Reader
	Log     hclog.Logger
	Level   hclog.Level
	MaxLine int
	Limiter *rate.Limiter
	Redact  *strings.Replacer // nil when there is nothing to redact
	Tail    *Tail
}

// Run reads until EOF or a read error (the pipe closed under it).
func (p *Pump) Run() {
	br := bufio.NewReaderSize(p.R, max(p.MaxLine, 64))
	suppressed := 0
	flush := func() {
		if suppressed > 0 {
			p.Log.Warn("stderr lines dropped by the rate limit (they are still in the crash tail)", "dropped", suppressed)
			suppressed = 0
		}
	}
	for {
		raw, err := readLine(br, p.MaxLine)
		if raw != nil {
			line := p.clean(raw)
			p.Tail.Add(line)
			if p.Limiter.Allow() {
				flush()
				p.Log.Log(p.Level, line)
			} else {
				suppressed++
			}
		}
		if err != nil {
			flush()
			return
		}
	}
}

// readLine returns the next line without its line ending, holding at most
// maxLine bytes of it; the rest of an overlong line is read and discarded
// (and its size appended as a note) so a huge line costs no memory. It
// returns a nil line with the error at EOF.
func readLine(br *bufio.Reader, maxLine int) ([]byte, error) {
	chunk, err := br.ReadSlice('\n')
	if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
		if len(chunk) == 0 && err != nil {
			return nil, err
		}
		line := trimEOL(chunk)
		dropped := 0
		if len(line) > maxLine {
			dropped = len(line) - maxLine
			line = line[:maxLine]
		}
		out := append(make([]byte, 0, len(line)), line...) // non-nil: an empty line is a line
		if dropped > 0 {
			out = fmt.Appendf(out, " …[%d more bytes]", dropped)
		}
		return out, err
	}
	// Overlong line: keep the head, skip to the newline.
	out := append([]byte(nil), chunk[:min(len(chunk), maxLine)]...)
	dropped := len(chunk) - len(out)
	for errors.Is(err, bufio.ErrBufferFull) {
		chunk, err = br.ReadSlice('\n')
		dropped += len(trimEOL(chunk))
	}
	out = fmt.Appendf(out, " …[%d more bytes]", dropped)
	return out, err
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// clean makes a raw line safe to log: valid UTF-8, no control characters
// (a server must not drive the host's terminal), secrets redacted.
func (p *Pump) clean(raw []byte) string {
	s := strings.ToValidUTF8(string(raw), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r != '\t' && unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if p.Redact != nil {
		s = p.Redact.Replace(s)
	}
	return headerRedaction.ReplaceAllString(s, "$1: [REDACTED]")
}

// NewRedactor returns a replacer that hides each secret, or nil.
func NewRedactor(secrets []string) *strings.Replacer {
	if len(secrets) == 0 {
		return nil
	}
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, "[REDACTED]")
	}
	return strings.NewReplacer(pairs...)
}
