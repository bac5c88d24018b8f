package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func (a *app) registryCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "registry",
		Short: "Publish to and serve a static sparse index",
		RunE:  func(*cobra.Command, []string) error { return errors.New("registry commands are not built yet") },
	}
}
