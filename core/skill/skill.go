// Package skill reads agent skills: a directory named after the skill that
// holds a SKILL.md, whose YAML frontmatter gives the skill's name and a
// description saying what it does and when to use it, followed by the
// instructions themselves in Markdown.
//
//	---
//	name: author-extension
//	description: Write, install and check a yolop extension.
//	---
//	# Authoring an extension
//	...
//
// The format is the agent-neutral one of `.agents/skills/`. [Parse] reads
// the frontmatter of a file, [Load] reads and validates a skill directory,
// and [ReadFile] reads a SKILL.md for an agent without following a
// symlink out of the package that contributes it. Nothing here writes.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FileName is the file a skill directory holds.
const FileName = "SKILL.md"

// Limits of a skill.
const (
	// MaxNameLen is the longest skill name.
	MaxNameLen = 64
	// MaxDescriptionLen is the longest description, in characters.
	MaxDescriptionLen = 1024
	// MaxFileBytes is the largest SKILL.md read; a larger one is refused
	// without being read.
	MaxFileBytes = 1 << 20
)

// Errors of this package, matched with errors.Is.
var (
	// ErrInvalid means a SKILL.md has no frontmatter, or its name or
	// description breaks the rules.
	ErrInvalid = errors.New("invalid SKILL.md")
	// ErrEscapes means a skill's directory or SKILL.md is a symlink that
	// leaves the package contributing it, or is not a regular file.
	ErrEscapes = errors.New("skill leaves its package")
)

// Meta is the frontmatter of a SKILL.md that yolop reads. Other keys
// (license, metadata, allowed-tools …) are accepted and ignored.
type Meta struct {
	// Name is the skill's name: lowercase letters, digits and '-', at most
	// [MaxNameLen], equal to its directory's name.
	Name string
	// Description says what the skill does and when to use it; at most
	// [MaxDescriptionLen] characters.
	Description string
}

var nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports why name is not a skill name, or nil. A valid name
// can never be a path: it holds no '/', '\\' or "..".
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the name is empty", ErrInvalid)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: name %q is longer than %d characters", ErrInvalid, clip(name), MaxNameLen)
	case !nameRE.MatchString(name):
		return fmt.Errorf("%w: name %q must be lowercase letters, digits and single '-' between them", ErrInvalid, clip(name))
	}
	return nil
}

// Parse reads the frontmatter of a SKILL.md and returns it with the body
// that follows. It checks the name and the description are present and
// within the rules; [Load] also checks the name against the directory.
func Parse(data []byte) (Meta, string, error) {
	var m Meta
	if !utf8.Valid(data) {
		return m, "", fmt.Errorf("%w: not UTF-8 text", ErrInvalid)
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		return m, "", fmt.Errorf("%w: it must start with a '---' line opening the frontmatter (name, description)", ErrInvalid)
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return m, "", fmt.Errorf("%w: the frontmatter is not closed by a '---' line", ErrInvalid)
	}
	fields, err := parseFields(lines[1:end])
	if err != nil {
		return m, "", err
	}
	m.Name, m.Description = fields["name"], strings.TrimSpace(fields["description"])
	if err := ValidName(m.Name); err != nil {
		return m, "", err
	}
	switch n := utf8.RuneCountInString(m.Description); {
	case n == 0:
		return m, "", fmt.Errorf("%w: skill %s has no description; say what it does and when to use it", ErrInvalid, m.Name)
	case n > MaxDescriptionLen:
		return m, "", fmt.Errorf("%w: skill %s: the description is %d characters, more than %d", ErrInvalid, m.Name, n, MaxDescriptionLen)
	}
	return m, strings.Join(lines[end+1:], "\n"), nil
}

// parseFields reads the top-level scalar keys of a YAML frontmatter: plain
// values (continued on indented lines), single- or double-quoted values
// and block scalars (| and >). Nested values of other keys are skipped.
func parseFields(lines []string) (map[string]string, error) {
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") || l[0] == ' ' || l[0] == '\t' || l[0] == '-' {
			continue // blank, comment, or the nested part of another key
		}
		key, val, ok := strings.Cut(l, ":")
		if !ok {
			return nil, fmt.Errorf("%w: frontmatter line %d is not 'key: value': %q", ErrInvalid, i+2, clip(l))
		}
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("%w: frontmatter key %q appears twice", ErrInvalid, key)
		}
		switch {
		case strings.HasPrefix(val, "|") || strings.HasPrefix(val, ">"):
			var block []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
				i++
				block = append(block, strings.TrimSpace(lines[i]))
			}
			sep := " "
			if val[0] == '|' {
				sep = "\n"
			}
			val = strings.TrimSpace(strings.Join(block, sep))
		case strings.HasPrefix(val, `"`):
			s, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("%w: frontmatter %s: a double-quoted value that does not close: %s", ErrInvalid, key, clip(val))
			}
			val = s
		case strings.HasPrefix(val, "'"):
			if len(val) < 2 || !strings.HasSuffix(val, "'") {
				return nil, fmt.Errorf("%w: frontmatter %s: a single-quoted value that does not close: %s", ErrInvalid, key, clip(val))
			}
			val = strings.ReplaceAll(val[1:len(val)-1], "''", "'")
		case val != "":
			// A plain scalar; indented lines after it continue it.
			parts := []string{val}
			for i+1 < len(lines) && lines[i+1] != "" && (lines[i+1][0] == ' ' || lines[i+1][0] == '\t') {
				i++
				parts = append(parts, strings.TrimSpace(lines[i]))
			}
			val = strings.Join(parts, " ")
			if j := strings.Index(val, " #"); j >= 0 {
				val = strings.TrimSpace(val[:j])
			}
		}
		out[key] = val
	}
	return out, nil
}

// Load reads dir/SKILL.md and validates its frontmatter; the name must be
// the directory's own name.
func Load(dir string) (Meta, error) {
	data, err := readCapped(filepath.Join(dir, FileName))
	if err != nil {
		return Meta{}, err
	}
	m, _, err := Parse(data)
	if err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, FileName), err)
	}
	if base := filepath.Base(dir); m.Name != base {
		return m, fmt.Errorf("%s: %w: the name is %q but the directory is %q; they must match", filepath.Join(dir, FileName), ErrInvalid, m.Name, base)
	}
	return m, nil
}

// ReadFile returns the text of dir/SKILL.md, refusing a directory or file
// whose real path (symlinks resolved) is not inside root, the package
// that contributes the skill, and anything but a regular file.
func ReadFile(root, dir string) ([]byte, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("skill package %s: %w", root, err)
	}
	p := filepath.Join(dir, FileName)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %w", p, err)
	}
	if !inside(realRoot, real) {
		return nil, fmt.Errorf("%w: %s resolves to %s, outside %s", ErrEscapes, p, real, realRoot)
	}
	return readCapped(real)
}

// readCapped reads a regular file of at most MaxFileBytes.
func readCapped(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("skill: %w", err)
	}
	if !fi.Mode().IsRegular() { // checked before opening: a FIFO would block
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrEscapes, p)
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrInvalid, p, fi.Size(), MaxFileBytes)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("skill: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("skill: reading %s: %w", p, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: %s grew past %d bytes while being read", ErrInvalid, p, MaxFileBytes)
	}
	return bytes.Clone(data), nil
}

// inside reports whether p is root or below it; both are clean and
// absolute.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
