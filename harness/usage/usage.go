// Package usage checks a command's positional arguments against its
// usage line, the way yolop's commands do, for any command-line front-end
// (it knows no flag library): each <name> placeholder of "install
// <source>" is required, each [name] optional, and a placeholder after a
// flag ("--index <dir>") is the flag's value, not an argument. A missing
// argument is named, with the usage line and the names that would fit
// it; an extra one is refused. An unknown subcommand gets the same kind
// of message, with suggestions.
package usage

import (
	"fmt"
	"regexp"
	"strings"
)

// placeholder matches the <required> and [optional] arguments of a usage
// line.
var placeholder = regexp.MustCompile(`<[^>]+>|\[[^\]]+\]`)

// Args are the positional arguments a usage line declares.
type Args struct {
	Required, Optional []string
}

// Parse reads the positional arguments of use, a usage line such as
// "publish <file.crate> --index <dir>" (its <dir> is --index's value).
func Parse(use string) Args {
	var a Args
	for _, p := range placeholder.FindAllString(use, -1) {
		if !strings.HasPrefix(p, "<") {
			a.Optional = append(a.Optional, p)
			continue
		}
		i := strings.Index(use, p)
		if fields := strings.Fields(use[:max(i, 0)]); len(fields) > 0 && strings.HasPrefix(fields[len(fields)-1], "-") {
			continue
		}
		a.Required = append(a.Required, p)
	}
	return a
}

// A Command is what Check says of the command whose arguments it checks.
type Command struct {
	// Path is the command's path ("yolop ext enable") and UseLine its
	// usage line, shown after an error.
	Path, UseLine string
	// Candidates, when set, lists the names the missing argument may be
	// (installed extensions, say); Label names them ("installed"; empty:
	// "one of").
	Candidates func() []string
	Label      string
}

// Check returns an error that names the first missing argument of args,
// with c's usage line and candidates, or the first extra one; nil when
// args fit a.
func (a Args) Check(c Command, args []string) error {
	if len(args) < len(a.Required) {
		missing := a.Required[len(args)]
		msg := fmt.Sprintf("%s %s: missing %s", c.Path, strings.Join(append(append([]string(nil), a.Required...), a.Optional...), " "), missing)
		var names []string
		if c.Candidates != nil {
			names = c.Candidates()
		}
		if len(names) > 0 {
			label := c.Label
			if label == "" {
				label = "one of"
			}
			msg += fmt.Sprintf("; %s: %s", label, strings.Join(names, ", "))
		}
		return fmt.Errorf("%s\nUsage: %s", msg, c.UseLine)
	}
	if max := len(a.Required) + len(a.Optional); len(args) > max {
		return fmt.Errorf("%s: unexpected argument %q\nUsage: %s", c.Path, args[max], c.UseLine)
	}
	return nil
}

// UnknownCommand is the error for an unknown subcommand name of the
// command group at path, with the suggestions of what may have been
// meant.
func UnknownCommand(path, name string, suggestions []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command %q for %q", name, path)
	if len(suggestions) > 0 {
		fmt.Fprintf(&b, "\n\nDid you mean this?\n\t%s", strings.Join(suggestions, "\n\t"))
	}
	fmt.Fprintf(&b, "\n\nRun '%s --help' for its commands.", path)
	return fmt.Errorf("%s", b.String())
}
