package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"yolop.dev/doctor"
)

// doctorFailed is the error of a doctor run with failed checks; the
// report already says what failed.
type doctorFailed struct{ name string }

func (e doctorFailed) Error() string {
	return fmt.Sprintf("doctor: extension %s failed; fix the failed checks in the report and run `yolop ext doctor` again", e.name)
}
func (doctorFailed) ExitCode() int { return 1 }

func (a *app) extDoctorCmd() *cobra.Command {
	var (
		asJSON  bool
		timeout time.Duration
		grace   time.Duration
		hookTO  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "doctor <name|path>",
		Short: "Spawn an extension's server and grade its handshake against the manifest",
		Long: `doctor runs an extension's capability server exactly as a session does and
grades it against its manifest, with a pass, warn or fail per check:
protocol-version compatibility, every message validated against
schema/yep/v1/schema.json, the clamp (a tool, hook, MCP server, prompt or
opt-in wider than the manifest fails), the prompt facet, a round trip per
tool that has "example" arguments, every other facet the manifest declares
(each command run once with its "example" or no arguments, the config
pushed back as config/changed, each ui/ask sent during a tool call
answered with a canned answer, each status/changed recorded),
cancellation and a clean shutdown.

It is behavioural: it fires a synthetic pre_tool_use/post_tool_use event at
every hook subscription and shows each decision, then injects a hook
timeout and a server crash and reports what the host did — a subscription
with on_error "block" must fail closed.

The argument is an installed extension's name, or a package directory
(anything with a path separator, or an existing directory). The exit status
is 1 when any check fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.harness()
			if err != nil {
				return err
			}
			rep, err := h.Doctor(cmd.Context(), args[0], doctor.Options{ // h's transports: every one this binary has
				Logger:              a.log,
				HandshakeTimeout:    timeout,
				CallTimeout:         timeout,
				StopGrace:           grace,
				InjectedHookTimeout: hookTO,
			})
			if err != nil {
				return err
			}
			if asJSON {
				err = rep.WriteJSON(a.stdout)
			} else {
				err = rep.WriteTableStyled(a.stdout, a.paintStatus)
			}
			if err != nil {
				return err
			}
			if !rep.OK() {
				return doctorFailed{rep.Extension}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "bound on the handshake and on each wait for the server")
	cmd.Flags().DurationVar(&grace, "grace", 2*time.Second, "how long the server gets to exit after shutdown before it is killed")
	cmd.Flags().DurationVar(&hookTO, "hook-timeout", 100*time.Millisecond, "the deadline of the injected hook timeout")
	cmd.ValidArgsFunction = a.completeInstalled
	return cmd
}
