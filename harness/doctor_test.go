package harness_test

import (
	"context"
	"strings"
	"testing"

	"yolop.dev/doctor"
	"yolop.dev/harness"
	"yolop.dev/harness/internal/echotest"
)

// Doctor grades an installed extension through the harness's transport,
// and a name that is not installed is an error that says how to check a
// package directory instead.
func TestDoctor(t *testing.T) {
	cfg := echotest.Installed(t)
	ctx := context.Background()
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := h.Doctor(ctx, "echo", doctor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Extension != "echo" || !rep.OK() {
		var b strings.Builder
		rep.WriteJSON(&b)
		t.Fatalf("report of echo:\n%s", b.String())
	}
	if _, err := h.Doctor(ctx, "nosuch", doctor.Options{}); err == nil || !strings.HasPrefix(err.Error(), "doctor: ") || !strings.Contains(err.Error(), "./nosuch") {
		t.Fatalf("doctor of an extension not installed: %v", err)
	}
}
