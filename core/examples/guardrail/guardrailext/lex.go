package guardrailext

import "strings"

// Kinds of lexed items.
const (
	kWord  = iota
	kSep   // ; & && || | |& ;; ( ) or a newline: ends a simple command
	kRedir // a redirection operator; the next word is its target
)

// An item is one lexed piece of a shell command.
type item struct {
	kind int
	op   string // kSep, kRedir: the operator
	word word   // kWord
}

// A word is a shell word with its quotes removed.
type word struct {
	text string
	// dynamic says the word holds a parameter expansion or a command
	// substitution ($…, `…`) outside single quotes: its value is unknown.
	dynamic bool
	// glob says it holds an unquoted *, ? or [.
	glob bool
}

// lex splits a bash command into words, separators and redirections, the
// way the shell tokenises it, well enough to find write targets: quotes
// and backslashes are removed, comments and here-document bodies skipped,
// $(…), ${…} and `…` kept inside their word (and marked dynamic). It never
// fails: what it does not understand becomes part of a word.
func lex(s string) []item {
	var (
		out     []item
		b       strings.Builder
		inWord  bool
		quoted  bool // some part of the word was quoted or escaped
		cur     word
		heredoc bool     // the next word is a here-document delimiter
		strip   bool     // … of a <<- (leading tabs stripped)
		pending []string // delimiters whose bodies start at the next newline ("\t" prefix: <<-)
	)
	flush := func() {
		if !inWord {
			return
		}
		cur.text = b.String()
		out = append(out, item{kind: kWord, word: cur})
		if heredoc {
			d := cur.text
			if strip {
				d = "\t" + d
			}
			pending = append(pending, d)
			heredoc = false
		}
		b.Reset()
		inWord, quoted, cur = false, false, word{}
	}
	sep := func(op string) {
		flush()
		heredoc = false
		out = append(out, item{kind: kSep, op: op})
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			flush()
			i++
		case c == '\n':
			sep("\n")
			i = skipBodies(s, i+1, pending)
			pending = nil
		case c == '#' && !inWord:
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(s)
			}
		case c == '\'':
			inWord, quoted = true, true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				b.WriteString(s[i+1:])
				i = len(s)
				break
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 2
		case c == '"':
			inWord, quoted = true, true
			i++
			for i < len(s) && s[i] != '"' {
				switch {
				case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
					if s[i+1] != '\n' {
						b.WriteByte(s[i+1])
					}
					i += 2
				case s[i] == '$' || s[i] == '`':
					cur.dynamic = true
					j := expansionEnd(s, i)
					b.WriteString(s[i:j])
					i = j
				default:
					b.WriteByte(s[i])
					i++
				}
			}
			i++ // the closing quote
		case c == '\\':
			if i+1 < len(s) && s[i+1] == '\n' {
				i += 2 // a line continuation
				break
			}
			inWord, quoted = true, true
			if i+1 < len(s) {
				b.WriteByte(s[i+1])
			}
			i += 2
		case c == '$' || c == '`':
			inWord, cur.dynamic = true, true
			j := expansionEnd(s, i)
			b.WriteString(s[i:j])
			i = j
		case c == '&' && strings.HasPrefix(s[i:], "&>"):
			flush()
			op := "&>"
			if strings.HasPrefix(s[i:], "&>>") {
				op = "&>>"
			}
			out = append(out, item{kind: kRedir, op: op})
			i += len(op)
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			op := string(c)
			for _, two := range []string{"&&", "||", ";;", "|&"} {
				if strings.HasPrefix(s[i:], two) {
					op = two
				}
			}
			sep(op)
			i += len(op)
		case c == '>' || c == '<':
			if inWord && !quoted && !cur.dynamic && allDigits(b.String()) {
				// 2>file: the digits are the descriptor, not a word.
				b.Reset()
				inWord, cur = false, word{}
			}
			flush()
			op := string(c)
			for _, long := range []string{">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&"} {
				if len(long) > len(op) && strings.HasPrefix(s[i:], long) {
					op = long
				}
			}
			out = append(out, item{kind: kRedir, op: op})
			i += len(op)
			if op == "<<" || op == "<<-" {
				heredoc, strip = true, op == "<<-"
			}
		default:
			inWord = true
			if c == '*' || c == '?' || c == '[' {
				cur.glob = true
			}
			b.WriteByte(c)
			i++
		}
	}
	flush()
	return out
}

// expansionEnd returns the index just past the expansion at s[i] ($name,
// ${…}, $(…), $((…)), $'…' or `…`).
func expansionEnd(s string, i int) int {
	if s[i] == '`' {
		if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
			return i + j + 2
		}
		return len(s)
	}
	if i+1 >= len(s) {
		return len(s)
	}
	switch open := s[i+1]; open {
	case '(', '{':
		close := map[byte]byte{'(': ')', '{': '}'}[open]
		depth := 0
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case open:
				depth++
			case close:
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	case '\'':
		if j := strings.IndexByte(s[i+2:], '\''); j >= 0 {
			return i + j + 3
		}
		return len(s)
	}
	j := i + 1
	for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j == i+1 && j < len(s) && strings.IndexByte("@*#?$!-", s[j]) >= 0 {
		j++ // a special parameter
	}
	return j
}

// skipBodies skips the bodies of the pending here-documents, which start
// at s[i], and returns where the command resumes.
func skipBodies(s string, i int, delims []string) int {
	for _, d := range delims {
		stripTabs := strings.HasPrefix(d, "\t")
		d = strings.TrimPrefix(d, "\t")
		for i < len(s) {
			line, rest, found := strings.Cut(s[i:], "\n")
			i = len(s) - len(rest)
			if !found {
				i = len(s)
			}
			if stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			if line == d {
				break
			}
		}
	}
	return i
}
