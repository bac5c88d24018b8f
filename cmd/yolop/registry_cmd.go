package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"yolop.dev/registry/cratesio"
)

func (a *app) registryCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Publish to and serve a static sparse index",
		Long: `Maintain a static Cargo sparse index of yolop extensions: a plain
directory that any static file server or object store can host.

  publish <file.crate> --index <dir>   add a crate (and its artifacts) to an index
  serve <dir>                          serve an index on 127.0.0.1 for local use
  advise <dir> --crate X --severity S  add a security advisory for a crate

Install from it with:
  yolop ext install <name> --registry sparse+http://127.0.0.1:PORT/

See docs/registry.md.`,
	}
	cmd.AddCommand(a.registryPublishCmd(), a.registryServeCmd(), a.registryAdviseCmd())
	return cmd
}

func (a *app) registryPublishCmd() *cobra.Command {
	var (
		index     string
		artifacts []string
		dlBase    string
	)
	cmd := &cobra.Command{
		Use:   "publish <file.crate> --index <dir>",
		Short: "Add a .crate and its prebuilt artifacts to a static sparse index",
		Long: `Add a crate written by ` + "`yolop ext pack`" + ` to the static sparse index in --index
(created if missing): config.json (first publish only), the index line with
the crate's SHA-256 as cksum, the crate under crates/<name>/<version>/download
and each --artifact next to it. The crate must unpack under the installer's
own rules, a version can be published once, and every artifact the crate's
metadata names by a relative URL must be given with the pinned SHA-256
(checked before anything is written).

--dl-base https://host/path writes an absolute dl into a new config.json,
for cargo against a plain static host; yolop itself is happy with the
default relative dl.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if index == "" {
				return errors.New("publish: --index <dir> is required (the static index directory; it is created if missing)")
			}
			res, err := cratesio.Publish(cmd.Context(), index, args[0], cratesio.PublishOptions{DLBase: dlBase, Artifacts: artifacts})
			if err != nil {
				return err
			}
			for _, w := range res.Warnings {
				fmt.Fprintln(a.stderr, "warning: "+w)
			}
			fmt.Fprintf(a.stdout, "published %s %s to %s\n  cksum %s\n", res.Name, res.Version, index, res.Checksum)
			for _, f := range res.Artifacts {
				fmt.Fprintf(a.stdout, "  artifact %s\n", f)
			}
			fmt.Fprintf(a.stdout, "serve it with `yolop registry serve %s` (or any static file server)\n", index)
			return nil
		},
	}
	cmd.Flags().StringVar(&index, "index", "", "the static index `dir` (created if missing)")
	cmd.Flags().StringArrayVar(&artifacts, "artifact", nil, "a prebuilt artifact `file` to publish next to the crate (repeatable)")
	cmd.Flags().StringVar(&dlBase, "dl-base", "", "absolute `URL` the index will be served from, for an absolute dl in a new config.json")
	return cmd
}

func (a *app) registryServeCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve <dir>",
		Short: "Serve a static sparse index over HTTP (127.0.0.1 by default)",
		Long: `Serve the static index directory <dir> until interrupted. It prints the
registry URL to give to ` + "`yolop ext install --registry`" + `. GET and HEAD only;
ETag and Last-Modified answer revalidations with 304; a relative dl in
config.json is rewritten to an absolute URL on the request's host, so cargo
can use the index too. Any static file server serves the same directory
equally well for yolop (docs/registry.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, err := cratesio.ListenIndex(args[0], addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "serving %s from %s\n", srv.Registry(), args[0])
			fmt.Fprintf(a.stdout, "install with: yolop ext install <name> --registry %s\n", srv.Registry())
			return srv.Serve(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "`host:port` to listen on (port 0 picks a free one)")
	return cmd
}
