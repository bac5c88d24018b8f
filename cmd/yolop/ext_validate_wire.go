package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"yolop.dev/doctor"
)

// wireInvalid is the error of a transcript with a nonconforming message;
// the problems are already printed.
type wireInvalid struct{ files int }

func (e wireInvalid) Error() string {
	return fmt.Sprintf("validate-wire: %d file(s) hold messages that do not conform to schema/yep/v1/schema.json", e.files)
}
func (wireInvalid) ExitCode() int { return 1 }

func (a *app) extValidateWireCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate-wire <file>...",
		Short: "Check every message of a transcript against the YEP schema",
		Long: `validate-wire reads transcripts — one message a line, "→ " before what the
host sent and "← " before what the server sent, as ` + "`yolop session --record`" + `
writes them and the dialogue goldens in schema/yep/v1/dialogues hold them —
and checks every message as ` + "`yolop ext doctor`" + ` checks a live wire: the
envelope, the method's direction and kind, its params, and a response's
result or error against the request it answers. Other lines are skipped; a
"-- name --" section header starts a new exchange.

An SDK's tests capture their traffic this way to show that every message
the SDK emits conforms. The exit status is 0 when every message conforms
(warnings, such as a missing "jsonrpc" member, are printed), 1 otherwise.`,
		Example: `  yolop ext validate-wire session.txtar
  yolop ext validate-wire schema/yep/v1/dialogues/*.txtar`,
		Args:        cobra.MinimumNArgs(1),
		Annotations: map[string]string{"args": argsCustom}, // one or more files
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, file := range args {
				f, err := os.Open(file)
				if err != nil {
					return fmt.Errorf("validate-wire: %w", err)
				}
				rep, err := doctor.CheckTranscript(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("validate-wire: %s: %w", file, err)
				}
				for _, p := range rep.Problems {
					fmt.Fprintf(a.stdout, "%s:%s\n", file, p)
				}
				if rep.Failed() {
					bad++
					continue
				}
				fmt.Fprintf(a.stdout, "%s: %d messages (%d host→server, %d server→host) conform to schema/yep/v1/schema.json\n", file, rep.Messages, rep.ToServer, rep.ToHost)
			}
			if bad > 0 {
				return wireInvalid{files: bad}
			}
			return nil
		},
	}
}
