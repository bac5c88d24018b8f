package protocol

import (
	"encoding/json"
	"regexp"
	"strings"
)

// HoverText returns the plain text of a hover's contents, whatever form
// the server chose: MarkupContent ({kind, value}), a MarkedString (a string
// or {language, value}), or an array of MarkedStrings. Markdown is reduced
// to text: code fences are dropped (their content kept), links become their
// text, emphasis and backslash escapes are removed, and runs of blank lines
// collapse to one.
func HoverText(contents json.RawMessage) string {
	s := strings.TrimSpace(string(contents))
	if s == "" || s == "null" {
		return ""
	}
	switch s[0] {
	case '"':
		var v string
		_ = json.Unmarshal(contents, &v)
		return MarkdownToText(v)
	case '[':
		var items []json.RawMessage
		_ = json.Unmarshal(contents, &items)
		parts := make([]string, 0, len(items))
		for _, it := range items {
			if t := HoverText(it); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n\n")
	case '{':
		var v struct {
			Kind     string `json:"kind"`
			Language string `json:"language"`
			Value    string `json:"value"`
		}
		_ = json.Unmarshal(contents, &v)
		if v.Language != "" || v.Kind == "plaintext" {
			return strings.TrimSpace(v.Value)
		}
		return MarkdownToText(v.Value)
	}
	return ""
}

var (
	mdImage    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink     = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	mdRefLink  = regexp.MustCompile(`\[([^\]]+)\]\[[^\]]*\]`)
	mdBold     = regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`)
	mdEscape   = regexp.MustCompile(`\\([\\` + "`" + `*_{}\[\]()#+\-.!<>|~])`)
	mdHeading  = regexp.MustCompile(`^#{1,6}\s+`)
	mdRule     = regexp.MustCompile(`^\s*(-{3,}|\*{3,}|_{3,})\s*$`)
	mdLinkDefs = regexp.MustCompile(`^\s*\[[^\]]+\]:\s+\S+`)
)

// MarkdownToText reduces markdown to readable plain text.
func MarkdownToText(md string) string {
	var out []string
	inFence := false
	blank := false
	for _, line := range strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if !inFence {
			if mdRule.MatchString(line) || mdLinkDefs.MatchString(line) {
				continue
			}
			line = mdHeading.ReplaceAllString(line, "")
			line = mdImage.ReplaceAllString(line, "$1")
			line = mdLink.ReplaceAllString(line, "$1")
			line = mdRefLink.ReplaceAllString(line, "$1")
			line = mdBold.ReplaceAllString(line, "$1$2")
			line = strings.ReplaceAll(line, "`", "")
			line = mdEscape.ReplaceAllString(line, "$1")
			line = strings.TrimRight(line, " ")
		}
		if strings.TrimSpace(line) == "" {
			if blank || len(out) == 0 {
				continue
			}
			blank = true
			out = append(out, "")
			continue
		}
		blank = false
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
