package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"yolop.dev/transport/lab"
)

func (a *app) benchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure yolop's moving parts on this machine",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(a.benchTransportsCmd())
	return cmd
}

func (a *app) benchTransportsCmd() *cobra.Command {
	var (
		o      lab.Options
		sizes  []string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "transports",
		Short: "Run the echo server over every transport side by side and compare them with a hand-written ndjson floor",
		Long: `bench transports runs the same echo server over every transport this
binary has — stdio, go-plugin, wasm and the in-memory transport — beside the
floor, a hand-written ndjson echo loop over OS pipes, and beside
go-plugin-grpc, go-plugin's own unary gRPC call (no YEP), alternating them
in one run so they share the machine's noise. It prints p50/p99 latency, calls/s
and spawn→ready, each with its ratio to the floor: hot (calls back to back
from --concurrency callers) and idle (one call at a time after a pause)
apart, for every --size of payload.

WASM needs the echo server built for wasip1: --wasm-module, or, run from a
yolop checkout with Go installed, it is built for the run. docs/transports.md
says how to read the figures and how to add a transport.`,
		Example: `  yolop bench transports
  yolop bench transports --calls 5000 --concurrency 1,8 --size 1KiB
  yolop bench transports --transports stdio,go-plugin --json > lab.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Sizes, err = lab.ParseSizes(sizes); err != nil {
				return fmt.Errorf("bench transports --size: %w", err)
			}
			var oe *lab.OptionError
			if err := o.Validate(); errors.As(err, &oe) {
				return fmt.Errorf("bench transports --%s: %w", strings.ToLower(oe.Field), oe.Err)
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("bench transports: locating this binary, which serves the lab's servers: %w", err)
			}
			o.Exe = exe
			o.Progress = a.stderr
			o.Logger = a.log
			rep, err := lab.Run(cmd.Context(), o)
			if err != nil {
				return fmt.Errorf("bench transports: %w", err)
			}
			if asJSON {
				return a.printJSON(rep)
			}
			return rep.WriteTable(a.stdout)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Calls, "calls", 2000, "hot calls per side, payload size and concurrency (fewer for payloads over 4KiB)")
	f.IntVar(&o.IdleCalls, "idle-calls", 0, "idle calls per side and payload size (default 200, 20 over 4KiB)")
	f.IntSliceVar(&o.Concurrency, "concurrency", []int{1, 8, 64}, "numbers of concurrent callers of the hot measurements")
	f.StringSliceVar(&sizes, "size", []string{"1KiB", "1MiB"}, "payload sizes: the text each echo call sends and gets back (B, KiB, MiB)")
	f.IntVar(&o.Spawns, "spawns", 10, "spawn→ready samples per side")
	f.IntVar(&o.Rounds, "rounds", 10, "alternating rounds of each hot measurement")
	f.StringSliceVar(&o.Transports, "transports", nil, "transports to measure beside the floor (default all: "+strings.Join(lab.All[1:], ",")+")")
	f.StringVar(&o.WASMModule, "wasm-module", "", "the echo server built for wasip1 (default: build it with the go command)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// serveLabCmd serves one of the transport lab's servers; bench transports
// starts this binary with it.
func (a *app) serveLabCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "serve-lab <floor|stdio|go-plugin>",
		Short:  "Serve a transport lab server (used by bench transports)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lab.Serve(cmd.Context(), args[0], a.stdin, a.stdout, a.stderr)
		},
	}
}
