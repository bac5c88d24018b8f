package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness/record"
)

// Replay plays a session's recording against a new instance of the
// extension's server: the same server matches, an edited recording
// diverges at the edited line, and a recording without a dialogue of the
// extension says which dialogues it has.
func TestReplay(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "session.txtar")
	h := recordEcho(t, file)

	res, err := h.Replay(ctx, file, "echo", 0)
	if err != nil {
		t.Fatalf("replay against the same server: %v", err)
	}
	if res.Extension != "echo" || res.Dialogues != 1 || res.Messages < 4 {
		t.Errorf("result = %+v", res)
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "edited.txtar")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(data), `"output":"recorded"`, `"output":"edited"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = h.Replay(ctx, edited, "echo", 0)
	var div *record.Divergence
	if !errors.As(err, &div) || !strings.Contains(err.Error(), `want "edited", got "recorded"`) {
		t.Fatalf("replay of an edited recording: %v, want a divergence at the edit", err)
	}
	if res.Extension != "echo" {
		t.Errorf("result of a divergence = %+v", res)
	}

	other := filepath.Join(t.TempDir(), "other.txtar")
	if err := os.WriteFile(other, []byte(strings.Replace(string(data), "-- echo --", "-- other --", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Replay(ctx, other, "echo", 0); err == nil || !strings.Contains(err.Error(), "no dialogue of extension echo (it has other)") {
		t.Fatalf("replay without a dialogue of echo: %v", err)
	}
	if _, err := h.Replay(ctx, filepath.Join(t.TempDir(), "missing.txtar"), "echo", 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("replay of a missing file: %v", err)
	}
}
