package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/registry/cratesio"
)

func (a *app) extPackCmd() *cobra.Command {
	var o cratesio.PackOptions
	cmd := &cobra.Command{
		Use:   "pack <dir>",
		Short: "Write a deterministic .crate of a package for a sparse registry",
		Long: `Pack the extension package in <dir> for a sparse registry:

  yolop-extension-<name>-<version>.crate   the package (sorted entries, fixed
                                           mtimes and owners: the same input
                                           gives the same bytes)
  <name>-<target-triple>.tar.gz            one prebuilt server per target, for
                                           a package with a Go server

A Go server is the main package given by --go-main (a directory, or a
package path resolved from <dir>), else <dir> itself or <dir>/server when
either holds a main package. It is cross-compiled per target with GOOS,
GOARCH and CGO_ENABLED=0 (-trimpath, -buildvcs=false), and each archive's
file name and SHA-256 are written into the crate's Cargo.toml under
[package.metadata.yolop.artifacts.<triple>] before the crate is packed, so
the registry checksum of the crate pins the binaries too. A server binary
in <dir>/bin/ is left out of the crate (the artifacts provide it).

--targets takes host (the default with a Go server), none, or a comma list
of GOOS/GOARCH pairs or target triples: linux/amd64,linux/arm64,darwin/arm64.

Publish the result with:
  yolop registry publish <file.crate> --index <dir> --artifact <archive> ...

See docs/registry.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Log = a.stderr
			res, err := cratesio.Pack(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "packed %s %s: %s\n  sha256 %s\n", res.Crate, res.Version, res.File, res.SHA256)
			publish := "yolop registry publish " + res.File + " --index <index dir>"
			for _, art := range res.Artifacts {
				fmt.Fprintf(a.stdout, "artifact for %s: %s\n  sha256 %s\n", art.Target, art.File, art.SHA256)
				publish += " --artifact " + art.File
			}
			fmt.Fprintf(a.stdout, "publish it with:\n  %s\n", strings.TrimSpace(publish))
			return nil
		},
	}
	cmd.Flags().StringVarP(&o.OutDir, "output", "o", ".", "write the .crate and artifacts into `dir`")
	cmd.Flags().StringVar(&o.Targets, "targets", "", "host, none, or a comma list of GOOS/GOARCH pairs or target triples (default: host with a Go server, else none)")
	cmd.Flags().StringVar(&o.GoMain, "go-main", "", "the Go main `package` of the server (a directory, or a package path resolved from <dir>)")
	return cmd
}
