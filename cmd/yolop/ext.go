package main

import "github.com/spf13/cobra"

// extCmd groups the extension-management verbs.
func (a *app) extCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ext",
		Short: "Install, approve, enable and inspect extensions",
	}
	cmd.AddCommand(a.extDoctorCmd(), a.extPackCmd(), a.extSecretCmd())
	return cmd
}
