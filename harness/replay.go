package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"yolop.dev/harness/record"
)

// A ReplayResult is what [Harness.Replay] played.
type ReplayResult struct {
	// Extension is the replayed extension's name.
	Extension string
	// Dialogues and Messages count the dialogues played and the messages
	// in them.
	Dialogues, Messages int
}

// Replay plays the host side of each of the dialogues in file (a
// recording made with SessionOptions.Record) of target's
// extension (target as [Harness.Target] takes it: a package directory
// loaded in place, or an installed extension's name) against a new
// instance of its server, comparing every line the server sends with the
// recorded one except the members the file declares volatile; wait bounds
// each wait for a message (zero: record's default). The first departure
// is returned as a *record.Divergence; a file without a dialogue of the
// extension is an error naming the dialogues it has.
func (h *Harness) Replay(ctx context.Context, file, target string, wait time.Duration) (ReplayResult, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return ReplayResult{}, err
	}
	f, err := record.Parse(file, data)
	if err != nil {
		return ReplayResult{}, err
	}
	_, g, err := h.Target(ctx, target)
	if err != nil {
		return ReplayResult{}, err
	}
	res := ReplayResult{Extension: g.Name}
	var dials []record.Dialogue
	var names []string
	for _, d := range f.Dialogues {
		names = append(names, d.Name)
		if d.Extension() == g.Name {
			dials = append(dials, d)
		}
	}
	if len(dials) == 0 {
		return res, fmt.Errorf("%s has no dialogue of extension %s (it has %s); record one with `yolop session --record FILE --ext <dir>`", file, g.Name, strings.Join(names, ", "))
	}
	for _, d := range dials {
		if g.Verify != nil {
			if err := g.Verify(); err != nil {
				return res, err
			}
		}
		inst, err := h.Transport().Start(ctx, g.Server)
		if err != nil {
			return res, fmt.Errorf("start extension %s: %w", g.Name, err)
		}
		err = record.Replay(ctx, inst, d, record.Options{Volatile: f.Volatile, Wait: wait})
		var div *record.Divergence
		if errors.As(err, &div) {
			return res, err
		}
		if err != nil {
			return res, fmt.Errorf("%s against %s: %w", file, g.Name, err)
		}
		res.Dialogues++
		res.Messages += len(d.Messages)
	}
	return res, nil
}
