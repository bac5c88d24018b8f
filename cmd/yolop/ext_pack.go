package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func (a *app) extPackCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "pack <dir>",
		Short: "Write a deterministic .crate of a package for a sparse registry",
		RunE:  func(*cobra.Command, []string) error { return errors.New("pack is not built yet") },
	}
}
