package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func (a *app) extSecretCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "secret",
		Short: "Manage extension secrets in the credential store",
		RunE:  func(*cobra.Command, []string) error { return errors.New("secrets are not built yet") },
	}
}
