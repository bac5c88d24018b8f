package harness

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"yolop.dev/internal/atomicfile"
)

// HistoryFile is the name of the line history [Harness.History] keeps in
// the config directory.
const HistoryFile = "history"

// MaxHistory is how many lines a [History] keeps.
const MaxHistory = 1000

// A History is a front-end's line history, kept across sessions in a file,
// most recent last, at most [MaxHistory] entries, one per line of the file
// (an entry of several lines is kept Go-quoted). Lines pass through a
// scrubber before they are kept, so a secret typed into a command line
// never lands on disk. Its methods have the shape of
// golang.org/x/term's History and are safe for concurrent use.
type History struct {
	path  string
	scrub func(string) string
	mu    sync.Mutex
	lines []string
}

// History returns the history in the config directory's [HistoryFile],
// scrubbed with the harness's scrubber.
func (h *Harness) History() *History {
	return LoadHistory(filepath.Join(h.dir, HistoryFile), h.scrub.Scrub)
}

// LoadHistory reads the history in the file at path (a missing file is an
// empty history); scrub, if not nil, rewrites each line before it is kept.
// An empty path keeps the history in memory only.
func LoadHistory(path string, scrub func(string) string) *History {
	h := &History{path: path, scrub: scrub}
	f, err := os.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxHistoryLine)
	for sc.Scan() {
		if l := decodeHistoryLine(sc.Text()); l != "" {
			h.lines = append(h.lines, l)
		}
	}
	if len(h.lines) > MaxHistory {
		h.lines = h.lines[len(h.lines)-MaxHistory:]
	}
	return h
}

// Add adds a line, scrubbed, and saves the history at once. An empty line,
// or one equal to the last, is not added.
func (h *History) Add(entry string) {
	entry = strings.TrimSpace(entry)
	if entry == "" {
		return
	}
	if h.scrub != nil {
		entry = h.scrub(entry)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.lines); n > 0 && h.lines[n-1] == entry {
		return
	}
	h.lines = append(h.lines, entry)
	if len(h.lines) > MaxHistory {
		h.lines = slices.Clone(h.lines[len(h.lines)-MaxHistory:])
	}
	if h.path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	var b strings.Builder
	for _, l := range h.lines {
		b.WriteString(encodeHistoryLine(l))
		b.WriteByte('\n')
	}
	_ = atomicfile.Write(h.path, []byte(b.String()), 0o600)
}

// maxHistoryLine bounds a line of the history file as it is read; a
// longer one (a paste of megabytes) ends the reading there.
const maxHistoryLine = 16 << 20

// encodeHistoryLine is an entry as its line in the file: as typed, or
// Go-quoted when it spans lines (multi-line input) or starts with a quote
// itself, so every entry is one line and comes back as it was.
func encodeHistoryLine(entry string) string {
	if strings.ContainsAny(entry, "\r\n") || strings.HasPrefix(entry, `"`) {
		return strconv.Quote(entry)
	}
	return entry
}

// decodeHistoryLine undoes encodeHistoryLine; a line that starts with a
// quote but does not unquote (an older file's) is taken as it is.
func decodeHistoryLine(line string) string {
	if strings.HasPrefix(line, `"`) {
		if s, err := strconv.Unquote(line); err == nil {
			return s
		}
	}
	return line
}

// Len returns the number of lines.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.lines)
}

// At returns a line: 0 is the most recent. Out of range is "".
func (h *History) At(idx int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if idx < 0 || idx >= len(h.lines) {
		return ""
	}
	return h.lines[len(h.lines)-1-idx]
}
