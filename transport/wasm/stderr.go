package wasm

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

// A tail keeps the last lines written to it.
type tail struct {
	mu    sync.Mutex
	lines []string // ring buffer of cap n
	next  int      // index of the oldest line once full
	n     int
}

func newTail(n int) *tail {
	n = max(n, 0)
	return &tail{n: n, lines: make([]string, 0, n)}
}

func (t *tail) add(line string) {
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

// snapshot returns the kept lines, oldest first, in a new slice.
func (t *tail) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.lines))
	out = append(out, t.lines[t.next:]...)
	return append(out, t.lines[:t.next]...)
}

// headerRedaction hides credentials in HTTP header lines, as cargo does.
var headerRedaction = regexp.MustCompile(`(?i)\b(proxy-authorization|authorization|set-cookie|cookie)\s*:.*`)

// A stderrPump reads a server's stderr line by line, caps each line,
// redacts it, keeps it in the tail and logs it under a rate limit.
type stderrPump struct {
	r       io.Reader
	log     hclog.Logger
	level   hclog.Level
	maxLine int
	limiter *rate.Limiter
	redact  *strings.Replacer // nil when there is nothing to redact
	tail    *tail
}

// run reads until EOF or a read error (the pipe closed under it).
func (p *stderrPump) run() {
	br := bufio.NewReaderSize(p.r, max(p.maxLine, 64))
	suppressed := 0
	flush := func() {
		if suppressed > 0 {
			p.log.Warn("stderr lines dropped by the rate limit (they are still in the crash tail)", "dropped", suppressed)
			suppressed = 0
		}
	}
	for {
		raw, err := readLine(br, p.maxLine)
		if raw != nil {
			line := p.clean(raw)
			p.tail.add(line)
			if p.limiter.Allow() {
				flush()
				p.log.Log(p.level, line)
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
func (p *stderrPump) clean(raw []byte) string {
	s := strings.ToValidUTF8(string(raw), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r != '\t' && unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if p.redact != nil {
		s = p.redact.Replace(s)
	}
	return headerRedaction.ReplaceAllString(s, "$1: [REDACTED]")
}

// newRedactor returns a replacer that hides each secret, or nil.
func newRedactor(secrets []string) *strings.Replacer {
	if len(secrets) == 0 {
		return nil
	}
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, "[REDACTED]")
	}
	return strings.NewReplacer(pairs...)
}
