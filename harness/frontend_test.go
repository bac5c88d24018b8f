package harness_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"yolop.dev/harness"
)

func TestNewLogger(t *testing.T) {
	var b strings.Builder
	t.Setenv(harness.LogEnv, "debug")
	log, err := harness.NewLogger("front", &b)
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("shown")
	log.Trace("hidden")
	if !strings.Contains(b.String(), "front: shown") || strings.Contains(b.String(), "hidden") {
		t.Errorf("debug log:\n%s", b.String())
	}

	b.Reset()
	t.Setenv(harness.LogEnv, "loud")
	log, err = harness.NewLogger("front", &b)
	if err == nil || !strings.Contains(err.Error(), `"loud"`) {
		t.Fatalf("a bad level: %v", err)
	}
	log.Info("hidden")
	log.Warn("shown")
	if !strings.Contains(b.String(), "shown") || strings.Contains(b.String(), "hidden") {
		t.Errorf("a bad level does not log at warn:\n%s", b.String())
	}
}

type exitErr struct{ code int }

func (e exitErr) Error() string { return fmt.Sprintf("exit %d", e.code) }
func (e exitErr) ExitCode() int { return e.code }

func TestExitStatus(t *testing.T) {
	for err, want := range map[error]int{
		nil:                                   0,
		errors.New("plain"):                   1,
		exitErr{3}:                            3,
		fmt.Errorf("wrapped: %w", exitErr{2}): 2,
		fmt.Errorf("wrapped: %w", exitErr{0}): 0,
	} {
		if got := harness.ExitStatus(err); got != want {
			t.Errorf("ExitStatus(%v) = %d, want %d", err, got, want)
		}
	}
}
