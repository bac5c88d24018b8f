package main

import (
	"errors"
	"fmt"
	"os"
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
			file, target := args[0], args[1]
			data, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			rec, err := record.Parse(file, data)
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			h, err := a.harness()
			if err != nil {
				return err
			}
			_, g, err := h.Target(cmd.Context(), target)
			if err != nil {
				return fmt.Errorf("replay: %w", err)
			}
			var dials []record.Dialogue
			var names []string
			for _, d := range rec.Dialogues {
				names = append(names, d.Name)
				if d.Extension() == g.Name {
					dials = append(dials, d)
				}
			}
			if len(dials) == 0 {
				return fmt.Errorf("replay: %s has no dialogue of extension %s (it has %s); record one with `yolop session --record FILE --ext <dir>`", file, g.Name, strings.Join(names, ", "))
			}
			msgs := 0
			for _, d := range dials {
				if g.Verify != nil {
					if err := g.Verify(); err != nil {
						return fmt.Errorf("replay: %w", err)
					}
				}
				inst, err := h.Transport().Start(cmd.Context(), g.Server)
				if err != nil {
					return fmt.Errorf("replay: start extension %s: %w", g.Name, err)
				}
				err = record.Replay(cmd.Context(), inst, d, record.Options{Volatile: rec.Volatile, Wait: wait})
				var div *record.Divergence
				if errors.As(err, &div) {
					fmt.Fprintf(a.stdout, "%s:%s\n", file, strings.TrimPrefix(div.Error(), "dialogue"))
					return replayDiverged{name: g.Name, file: file}
				}
				if err != nil {
					return fmt.Errorf("replay %s against %s: %w", file, g.Name, err)
				}
				msgs += len(d.Messages)
			}
			fmt.Fprintf(a.stdout, "replay: %s matches %s (%d dialogue(s), %d messages)\n", g.Name, file, len(dials), msgs)
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for each message from the server")
	return cmd
}
