package config

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"yolop.dev/harness/secrets"
)

// A Scrubber replaces every known secret value in text with
// "[redacted:<ext>.<field>]". Its methods are safe for concurrent use; the
// table can be reloaded or extended while a session runs.
//
// Besides each raw value it also replaces the value's JSON-escaped forms,
// so a secret containing a quote or a backslash is caught inside JSON
// (trace events, tool data) too.
type Scrubber struct {
	mu     sync.RWMutex
	labels map[string]string // value → "ext.field"
	r      *strings.Replacer // nil when there is nothing to replace
}

// NewScrubber returns an empty scrubber: Scrub is the identity until
// secrets are loaded or added.
func NewScrubber() *Scrubber { return &Scrubber{labels: map[string]string{}} }

// Label is what a secret of ext's field is replaced with.
func Label(ext, field string) string { return fmt.Sprintf("[redacted:%s.%s]", ext, field) }

// Load replaces the table with every secret in store.
func (s *Scrubber) Load(ctx context.Context, store secrets.Store) error {
	all, err := store.All(ctx)
	if err != nil {
		return fmt.Errorf("loading secrets for redaction: %w", err)
	}
	labels := map[string]string{}
	for ext, fields := range all {
		for field, v := range fields {
			addForms(labels, v.Reveal(), ext+"."+field)
		}
	}
	s.mu.Lock()
	s.labels = labels
	s.r = build(labels)
	s.mu.Unlock()
	return nil
}

// Add registers one secret (a value just set).
func (s *Scrubber) Add(ext, field string, v secrets.Secret) {
	if v.IsZero() {
		return
	}
	s.mu.Lock()
	addForms(s.labels, v.Reveal(), ext+"."+field)
	s.r = build(s.labels)
	s.mu.Unlock()
}

// Scrub implements the [host.ExtensionOptions].Scrub hook.
func (s *Scrubber) Scrub(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.RLock()
	r := s.r
	s.mu.RUnlock()
	if r == nil {
		return text
	}
	return r.Replace(text)
}

// Writer returns a writer that scrubs each write before passing it to w.
// hclog writes one log entry per Write, so each line is scrubbed whole.
func (s *Scrubber) Writer(w io.Writer) io.Writer { return scrubWriter{s, w} }

type scrubWriter struct {
	s *Scrubber
	w io.Writer
}

func (sw scrubWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(sw.w, sw.s.Scrub(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// addForms records value and its JSON-escaped forms under label.
func addForms(labels map[string]string, value, label string) {
	if value == "" {
		return
	}
	labels[value] = label
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(value) != nil {
			continue
		}
		q := strings.TrimSuffix(b.String(), "\n")
		if esc := q[1 : len(q)-1]; esc != value {
			labels[esc] = label
		}
	}
}

// build makes a replacer trying longer values first, so a secret that
// contains another is replaced whole.
func build(labels map[string]string) *strings.Replacer {
	if len(labels) == 0 {
		return nil
	}
	vals := make([]string, 0, len(labels))
	for v := range labels {
		vals = append(vals, v)
	}
	slices.SortFunc(vals, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, "[redacted:"+labels[v]+"]")
	}
	return strings.NewReplacer(pairs...)
}
