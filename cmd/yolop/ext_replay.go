package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"yolop.dev/harness/record"
)

// replayDiverged is the error of a replay whose server departed from the
// recording; the divergence is already printed.
type replayDiverged struct{ name, file string }

func (e replayDiverged) Error() string {
	return fmt.Sprintf("replay: extension %s does not match %s; fix the server, or record a new dialogue with `yolop session --record %s` if the change is intended", e.name, e.file, e.file)
}
func (replayDiverged) ExitCode() int { return 1 }

func (a *app) extReplayCmd() *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "replay <file> <dir|name>",
		Short: "Play a recorded session's host side against an extension and report the first divergence",
		Long: `replay reads FILE, a recording made with ` + "`yolop session --record FILE`" + `,
and plays the host side of each of the extension's dialogues against a new
instance of its server: a package directory loaded in place (your new
build), or an installed extension's name. Every line the server sends is
compared with the recorded one, except the members the file declares
volatile on its "volatile:" header line (ids, timestamps, durations).

The exit status is 0 when every dialogue matches, and 1 with the first
divergence (the file's line, the expected and the received message)
otherwise: record once, replay on every build.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			h, err := a.harness()
			if err != nil {
				return err
			}
			res, err := h.Replay(cmd.Context(), file, args[1], wait)
			var div *record.Divergence
			if errors.As(err, &div) {
				fmt.Fprintf(a.stdout, "%s:%s\n", file, strings.TrimPrefix(div.Error(), "dialogue"))
				return replayDiverged{name: res.Extension, file: file}
			}
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			fmt.Fprintf(a.stdout, "replay: %s matches %s (%d dialogue(s), %d messages)\n", res.Extension, file, res.Dialogues, res.Messages)
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for each message from the server")
	return cmd
}
