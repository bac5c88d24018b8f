package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryKeepsMultiLineEntries: an entry of several lines (the
// terminal UI's Alt+Enter) comes back whole in the next session, an
// entry that merely starts with a quote comes back as typed, and the
// plain lines of an older file still load.
func TestHistoryKeepsMultiLineEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), HistoryFile)
	if err := os.WriteFile(path, []byte("/tools\nold plain line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := LoadHistory(path, nil)
	entries := []string{"first line\nsecond line", `"quoted" as typed`, `"\n"`, "/status"}
	for _, e := range entries {
		h.Add(e)
	}
	again := LoadHistory(path, nil)
	want := append([]string{"/tools", "old plain line"}, entries...)
	if again.Len() != len(want) {
		t.Fatalf("%d entries after reload, want %d", again.Len(), len(want))
	}
	for i, w := range want {
		if got := again.At(len(want) - 1 - i); got != w {
			t.Errorf("entry %d = %q, want %q", i, got, w)
		}
	}
}

// TestHistoryLongEntry: an entry longer than a scanner's default line
// (a large paste) neither is lost nor loses the entries after it.
func TestHistoryLongEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), HistoryFile)
	h := LoadHistory(path, nil)
	long := strings.Repeat("x", 200<<10)
	h.Add("before")
	h.Add(long)
	h.Add("after")
	again := LoadHistory(path, nil)
	if again.Len() != 3 || again.At(0) != "after" || again.At(1) != long || again.At(2) != "before" {
		t.Fatalf("after reload: %d entries, most recent %q", again.Len(), again.At(0))
	}
}
