package harness

import "strings"

// CompleteLine completes the word before pos in line from cands, the
// completions of line[:pos] (a front-end's session commands give them): a
// single match is completed with a space after it, several to their
// common prefix. It returns the new line and cursor position, and false
// when there is nothing to complete. Its shape is that of
// golang.org/x/term's AutoCompleteCallback, for the Tab key.
func CompleteLine(line string, pos int, cands []string) (string, int, bool) {
	head, tail := line[:pos], line[pos:]
	start := strings.LastIndexByte(head, ' ') + 1
	word := head[start:]
	var match []string
	for _, c := range cands {
		if strings.HasPrefix(c, word) {
			match = append(match, c)
		}
	}
	if len(match) == 0 {
		return "", 0, false
	}
	done := match[0]
	for _, s := range match[1:] {
		for !strings.HasPrefix(s, done) {
			done = done[:len(done)-1]
		}
	}
	if len(match) == 1 {
		done += " "
	}
	if done == word {
		return "", 0, false
	}
	next := head[:start] + done
	return next + tail, len(next), true
}
