package main

import (
	"github.com/spf13/cobra"

	"yolop.dev/harness/usage"
)

// argsCustom, as the "args" annotation of a command, keeps its own Args
// validator (one that refuses a secret on the command line, say).
const argsCustom = "custom"

// candidatesLabel is the annotation that names what a command's
// completions are ("installed", "enabled") in a missing-argument message.
const candidatesLabel = "candidates"

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
	return usage.UnknownCommand(group.CommandPath(), name, group.SuggestionsFor(name))
}

// positional checks args against cmd's Use line (see harness/usage):
// each <name> is required, each [name] optional, and no more are accepted.
func (a *app) positional(cmd *cobra.Command) cobra.PositionalArgs {
	want := usage.Parse(cmd.Use)
	return func(c *cobra.Command, args []string) error {
		return want.Check(usage.Command{Path: c.CommandPath(), UseLine: c.UseLine(), Label: c.Annotations[candidatesLabel],
			Candidates: func() []string { return a.candidates(c, args) }}, args)
	}
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
