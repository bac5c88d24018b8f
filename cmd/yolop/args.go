package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// argsCustom, as the "args" annotation of a command, keeps its own Args
// validator (one that refuses a secret on the command line, say).
const argsCustom = "custom"

// candidatesLabel is the annotation that names what a command's
// completions are ("installed", "enabled") in a missing-argument message.
const candidatesLabel = "candidates"

// placeholder matches the <required> and [optional] arguments of a Use line.
var placeholder = regexp.MustCompile(`<[^>]+>|\[[^\]]+\]`)

// strictTree makes every command of the tree behave the way users of gh
// and cargo expect: a command group given an unknown subcommand fails with
// "unknown command" and cobra's suggestions (exit status 1) instead of
// printing its help and succeeding; a command's positional arguments are
// checked against the placeholders of its Use line, so a missing one says
// which, with the usage line and, where the command completes names, the
// names there are.
func (a *app) strictTree(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		a.strictTree(c)
	}
	cmd.SuggestionsMinimumDistance = 2
	if cmd.HasSubCommands() && cmd.Run == nil && cmd.RunE == nil {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			return unknownCommand(c, args[0])
		}
		return
	}
	if cmd.Annotations["args"] == argsCustom || cmd.HasSubCommands() {
		return
	}
	cmd.Args = a.positional(cmd)
}

// unknownCommand is the error for an unknown subcommand of group.
func unknownCommand(group *cobra.Command, name string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command %q for %q", name, group.CommandPath())
	if s := group.SuggestionsFor(name); len(s) > 0 {
		fmt.Fprintf(&b, "\n\nDid you mean this?\n\t%s", strings.Join(s, "\n\t"))
	}
	fmt.Fprintf(&b, "\n\nRun '%s --help' for its commands.", group.CommandPath())
	return fmt.Errorf("%s", b.String())
}

// positional checks args against cmd's Use line: each <name> is required,
// each [name] optional, and no more are accepted.
func (a *app) positional(cmd *cobra.Command) cobra.PositionalArgs {
	var required, optional []string
	for _, p := range placeholder.FindAllString(cmd.Use, -1) {
		if strings.HasPrefix(p, "<") {
			required = append(required, p)
		} else {
			optional = append(optional, p)
		}
	}
	// A placeholder after a flag (--index <dir>) belongs to the flag.
	required = dropFlagValues(cmd.Use, required)
	return func(c *cobra.Command, args []string) error {
		if len(args) < len(required) {
			missing := required[len(args)]
			msg := fmt.Sprintf("%s %s: missing %s", c.CommandPath(), strings.Join(append(append([]string(nil), required...), optional...), " "), missing)
			if names := a.candidates(c, args); len(names) > 0 {
				label := c.Annotations[candidatesLabel]
				if label == "" {
					label = "one of"
				}
				msg += fmt.Sprintf("; %s: %s", label, strings.Join(names, ", "))
			}
			return fmt.Errorf("%s\nUsage: %s", msg, c.UseLine())
		}
		if max := len(required) + len(optional); len(args) > max {
			return fmt.Errorf("%s: unexpected argument %q\nUsage: %s", c.CommandPath(), args[max], c.UseLine())
		}
		return nil
	}
}

// dropFlagValues removes from required the placeholders that follow a flag
// in use ("publish <file.crate> --index <dir>": <dir> is --index's value).
func dropFlagValues(use string, required []string) []string {
	var out []string
	for _, p := range required {
		i := strings.Index(use, p)
		before := strings.TrimSpace(use[:max(i, 0)])
		if fields := strings.Fields(before); len(fields) > 0 && strings.HasPrefix(fields[len(fields)-1], "-") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// candidates are the completions of c's next argument, when it has any.
func (a *app) candidates(c *cobra.Command, args []string) []string {
	if c.ValidArgsFunction == nil {
		return nil
	}
	names, dir := c.ValidArgsFunction(c, args, "")
	if dir == cobra.ShellCompDirectiveError {
		return nil
	}
	return names
}
