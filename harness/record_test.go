package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
	"yolop.dev/harness/record"
)

// SessionOptions.Record writes the dialogue of every extension server the
// session started when it closes; a file that cannot be created is a
// warning naming it, and the session runs unrecorded.
func TestSessionRecord(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "session.txtar")
	h := recordEcho(t, file)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no recording: %v", err)
	}
	f, err := record.Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Dialogues) != 1 || f.Dialogues[0].Name != "echo" || !strings.Contains(string(data), `"output":"recorded"`) {
		t.Fatalf("recording:\n%s", data)
	}

	bad := filepath.Join(t.TempDir(), "nowhere", "session.txtar")
	s, warnings := h.NewSession(ctx, harness.SessionOptions{Record: bad})
	defer s.Close()
	if len(warnings) != 1 || !strings.Contains(warnings[0], bad) || !strings.Contains(warnings[0], "not recorded") {
		t.Fatalf("warnings = %q, want one naming %s", warnings, bad)
	}
}

// recordEcho opens a harness over an installed echo extension and records
// into file a session that calls its echo tool once with "recorded".
func recordEcho(t *testing.T, file string) *harness.Harness {
	t.Helper()
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: echotest.Installed(t)})
	if err != nil {
		t.Fatal(err)
	}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{Record: file})
	if len(warnings) > 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(ctx, "echo", "c1", []byte(`{"text":"recorded"}`), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return h
}
