package manager

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"yolop.dev/extensions/lsp/internal/protocol"
)

// A scanner notices source files that changed on disk without the
// server's knowledge (the agent edits files with other tools) by comparing
// modification times and sizes between walks of the workspace.
type scanner struct {
	root     string
	exts     []string
	interval time.Duration
	max      int

	mu       sync.Mutex
	stamps   map[string]stamp
	last     time.Time
	disabled bool
}

type stamp struct {
	mod  time.Time
	size int64
}

// skipDirs are directories never scanned.
var skipDirs = map[string]bool{"node_modules": true, "target": true, "vendor": true, "__pycache__": true, "dist": true, "build": true}

func newScanner(root string, exts []string, interval time.Duration, max int) *scanner {
	s := &scanner{root: root, exts: exts, interval: interval, max: max}
	s.scan(true)
	return s
}

func (s *scanner) matches(name string) bool {
	name = strings.ToLower(name)
	for _, e := range s.exts {
		if strings.HasSuffix(name, strings.ToLower(e)) {
			return true
		}
	}
	return false
}

// scan walks the workspace (unless it did so within the interval) and
// returns the changes since the previous walk. The first walk only records.
func (s *scanner) scan(first bool) []protocol.FileEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disabled || (!first && time.Since(s.last) < s.interval) {
		return nil
	}
	next := make(map[string]stamp, len(s.stamps))
	var events []protocol.FileEvent
	count := 0
	_ = filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != s.root && (strings.HasPrefix(d.Name(), ".") || skipDirs[d.Name()]) {
				return filepath.SkipDir
			}
			return nil
		}
		if !s.matches(d.Name()) {
			return nil
		}
		if count++; count > s.max {
			return filepath.SkipAll
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		st := stamp{fi.ModTime(), fi.Size()}
		next[p] = st
		if first {
			return nil
		}
		old, ok := s.stamps[p]
		switch {
		case !ok:
			events = append(events, protocol.FileEvent{URI: protocol.URIFromPath(p), Type: protocol.FileCreated})
		case old != st:
			events = append(events, protocol.FileEvent{URI: protocol.URIFromPath(p), Type: protocol.FileChanged})
		}
		return nil
	})
	if count > s.max {
		s.disabled = true
		s.stamps = nil
		return nil
	}
	if !first {
		for p := range s.stamps {
			if _, ok := next[p]; !ok {
				events = append(events, protocol.FileEvent{URI: protocol.URIFromPath(p), Type: protocol.FileDeleted})
			}
		}
	}
	s.stamps = next
	s.last = time.Now()
	return events
}

// touch records the current stamps of paths.
func (s *scanner) touch(paths []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disabled || s.stamps == nil {
		return
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			s.stamps[p] = stamp{fi.ModTime(), fi.Size()}
		} else {
			delete(s.stamps, p)
		}
	}
}
