package main

import (
	"errors"

	"github.com/spf13/cobra"
)

func (a *app) extDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor <name|path>",
		Short: "Spawn an extension's server and grade its handshake against the manifest",
		RunE:  func(*cobra.Command, []string) error { return errors.New("doctor is not built yet") },
	}
}
