package guardrailext

import (
	"path/filepath"
	"strings"
)

// A Target is a file a tool call would write.
type Target struct {
	// Path is the file as the command names it, joined to the directory
	// an earlier `cd` in the command moved to: relative to the workspace
	// root, or absolute.
	Path string
	// Glob says Path holds unquoted glob metacharacters, to expand.
	Glob bool
	// Via says how the command writes it: "output redirection", "tee",
	// "sed -i", "cp", "mv", "truncate" or "dd of=".
	Via string
	// Sources are what cp or mv copy or move to Path (non-nil for them,
	// nil otherwise): when Path is a directory, the files written are
	// Path/<base of each source>.
	Sources []Target
	// Into says Path was given with -t: it is a directory, never a file.
	Into bool
}

// BashTargets lists, best effort, the files a bash command writes to. A
// hook cannot run the shell, so this reads the command the way the shell
// would split it — quotes, backslashes, comments, here-documents,
// operators (; && || | & ( ) and newlines) — and picks the write targets
// of the forms an agent uses to change a file:
//
//   - output redirections: > >> >| &> &>> <> and >&FILE, with an optional
//     file descriptor (2>);
//   - tee [-a] FILE…;
//   - sed -i (also -i.bak, --in-place, -Ei) FILE…;
//   - cp and mv: the destination, or DIR/<source name> when it is a
//     directory or given with -t;
//   - truncate FILE…;
//   - dd of=FILE.
//
// Leading VAR=value assignments, the wrappers sudo, env, command, exec,
// nohup and time, and the keywords of compound commands are skipped; a
// `cd DIR` moves the directory later relative paths are read from (undone
// at the end of a parenthesised subshell).
//
// What it cannot know it leaves out: a word holding $… or `…` (a variable
// or a command substitution), a path starting with ~, and anything after a
// cd whose directory it cannot tell. Commands it does not list — rm,
// perl -i, python -c, a script that writes, eval, commands inside $(…) —
// are not seen at all: this is a guardrail against the usual slip, not a
// sandbox.
func BashTargets(command string) []Target {
	var (
		out   []Target
		cwd   = "."
		known = true // cwd is known
		stack []dir  // the directories to return to at each ")"
		cmd   []item
	)
	run := func() {
		if len(cmd) == 0 {
			return
		}
		var words []word
		for i := 0; i < len(cmd); i++ {
			it := cmd[i]
			if it.kind == kWord {
				words = append(words, it.word)
				continue
			}
			// A redirection; its target is the next word, if any.
			var tgt *word
			if i+1 < len(cmd) && cmd[i+1].kind == kWord {
				tgt = &cmd[i+1].word
				i++
			}
			if tgt == nil || !writes(it.op, tgt.text) {
				continue
			}
			if t, ok := target(*tgt, cwd, known, "output redirection"); ok {
				out = append(out, t)
			}
		}
		cmd = cmd[:0]
		args := stripPrefix(words)
		if len(args) == 0 {
			return
		}
		name := filepath.Base(args[0].text)
		if args[0].dynamic {
			return
		}
		if name == "cd" {
			cwd, known = cd(args[1:], cwd, known)
			return
		}
		for _, w := range writtenBy(name, args[1:]) {
			t, ok := target(w.word, cwd, known, w.via)
			if !ok {
				continue
			}
			if w.sources != nil { // cp, mv: non-nil even when no source can be known
				t.Sources = make([]Target, 0, len(w.sources))
				for _, s := range w.sources {
					if st, ok := target(s, cwd, known, w.via); ok {
						t.Sources = append(t.Sources, st)
					}
				}
			}
			t.Into = w.into
			out = append(out, t)
		}
	}
	for _, it := range lex(command) {
		if it.kind != kSep {
			cmd = append(cmd, it)
			continue
		}
		run()
		switch it.op {
		case "(":
			stack = append(stack, dir{cwd, known})
		case ")":
			if n := len(stack); n > 0 {
				cwd, known, stack = stack[n-1].path, stack[n-1].known, stack[:n-1]
			}
		}
	}
	run()
	return out
}

// A dir is a working directory: its path, and whether it is known.
type dir struct {
	path  string
	known bool
}

// writes says whether a redirection with op (and target text) writes a
// file.
func writes(op, text string) bool {
	switch op {
	case ">", ">>", ">|", "&>", "&>>", "<>":
		return true
	case ">&":
		// >&2 and >&- duplicate or close a descriptor; >&FILE writes FILE.
		return text != "-" && !allDigits(text)
	}
	return false
}

// target turns a written word into a Target, joined to cwd; false when its
// path cannot be known.
func target(w word, cwd string, known bool, via string) (Target, bool) {
	p := w.text
	if w.dynamic || p == "" || strings.HasPrefix(p, "~") {
		return Target{}, false
	}
	if !filepath.IsAbs(p) {
		if !known {
			return Target{}, false
		}
		p = filepath.Join(cwd, p)
	}
	return Target{Path: p, Glob: w.glob, Via: via}, true
}

// cd returns the directory a cd with args leaves the shell in.
func cd(args []word, cwd string, known bool) (string, bool) {
	for len(args) > 0 && (args[0].text == "-L" || args[0].text == "-P" || args[0].text == "--") {
		args = args[1:]
	}
	if len(args) == 0 || args[0].dynamic || args[0].glob || args[0].text == "-" || strings.HasPrefix(args[0].text, "~") {
		return "", false // home, the previous directory, or unknown
	}
	if filepath.IsAbs(args[0].text) {
		return filepath.Clean(args[0].text), true
	}
	return filepath.Join(cwd, args[0].text), known
}

// stripPrefix drops what comes before the command name: assignments,
// wrappers (with their options) and compound-command keywords.
func stripPrefix(words []word) []word {
	for len(words) > 0 {
		w := words[0]
		switch {
		case isAssignment(w.text):
		case w.text == "sudo" || w.text == "env" || w.text == "command" || w.text == "exec" || w.text == "nohup" || w.text == "time":
			for len(words) > 1 && strings.HasPrefix(words[1].text, "-") {
				words = words[1:]
			}
		case isKeyword(w.text):
		default:
			return words
		}
		words = words[1:]
	}
	return nil
}

func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isKeyword(s string) bool {
	switch s {
	case "if", "then", "elif", "else", "while", "until", "do", "!", "{", "}":
		return true
	}
	return false
}

// A written is one file a command writes, as a word.
type written struct {
	word    word
	via     string
	sources []word // cp, mv: non-nil
	into    bool
}

// writtenBy lists the files the command name writes given its args.
func writtenBy(name string, args []word) []written {
	var out []written
	switch name {
	case "tee":
		for _, a := range operands(args, nil) {
			out = append(out, written{word: a, via: "tee"})
		}
	case "truncate":
		for _, a := range operands(args, map[string]bool{"-s": true, "-r": true, "--size": true, "--reference": true}) {
			out = append(out, written{word: a, via: "truncate"})
		}
	case "dd":
		for _, a := range args {
			if f, ok := strings.CutPrefix(a.text, "of="); ok {
				a.text = f
				out = append(out, written{word: a, via: "dd of="})
			}
		}
	case "sed":
		for _, a := range sedFiles(args) {
			out = append(out, written{word: a, via: "sed -i"})
		}
	case "cp", "mv":
		ops := operands(args, map[string]bool{"-t": true, "--target-directory": true, "-S": true, "--suffix": true})
		if dir, ok := optionValue(args, "-t", "--target-directory"); ok {
			return []written{{word: dir, via: name, sources: append([]word{}, ops...), into: true}}
		}
		if len(ops) < 2 {
			return nil
		}
		return []written{{word: ops[len(ops)-1], via: name, sources: append([]word{}, ops[:len(ops)-1]...)}}
	}
	return out
}

// operands returns the non-option arguments; withArg names the options
// that take a value (as the next word, or attached: -s10, --size=10).
func operands(args []word, withArg map[string]bool) []word {
	var out []word
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "--":
			return append(out, args[i+1:]...)
		case strings.HasPrefix(a, "--"):
			if withArg[a] {
				i++
			}
		case len(a) > 1 && a[0] == '-':
			if withArg[a] {
				i++
			}
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// optionValue returns the value of a short or long option given as
// "-t DIR", "-tDIR", "--target-directory DIR" or "--target-directory=DIR".
func optionValue(args []word, short, long string) (word, bool) {
	for i, a := range args {
		switch {
		case a.text == "--":
			return word{}, false
		case a.text == short || a.text == long:
			if i+1 < len(args) {
				return args[i+1], true
			}
		case strings.HasPrefix(a.text, long+"="):
			a.text = strings.TrimPrefix(a.text, long+"=")
			return a, true
		case strings.HasPrefix(a.text, short) && !strings.HasPrefix(a.text, "--"):
			a.text = strings.TrimPrefix(a.text, short)
			return a, true
		}
	}
	return word{}, false
}

// sedFiles returns the files an in-place sed edits; none without -i.
func sedFiles(args []word) []word {
	inPlace, script := false, false
	var files []word
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a, "=")
			switch name {
			case "--in-place":
				inPlace = true
			case "--expression", "--file":
				script = true
				if !hasValue {
					i++
				}
			case "--line-length":
				if !hasValue {
					i++
				}
			}
		case len(a) > 1 && a[0] == '-':
			// A cluster of short options; i takes the rest as its suffix,
			// e, f and l the rest or the next word as their value.
		cluster:
			for k := 1; k < len(a); k++ {
				switch a[k] {
				case 'i':
					inPlace = true
					break cluster
				case 'e', 'f', 'l':
					if a[k] != 'l' {
						script = true
					}
					if k == len(a)-1 {
						i++
					}
					break cluster
				}
			}
		case !script:
			script = true // the first operand is the script
		default:
			files = append(files, args[i])
		}
	}
	if !inPlace {
		return nil
	}
	return files
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
