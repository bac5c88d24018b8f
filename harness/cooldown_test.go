package harness_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"yolop.dev/harness"
	"yolop.dev/harness/firstseen"
	"yolop.dev/harness/manager"
	"yolop.dev/registry/cratesio"
)

func publishEcho(t *testing.T, index, version string) {
	t.Helper()
	src := t.TempDir()
	files := map[string]string{
		"Cargo.toml":  fmt.Sprintf("[package]\nname = \"yolop-extension-echo\"\nversion = %q\n", version),
		"plugin.json": fmt.Sprintf(`{"name":"echo","version":%q,"yolop":{"protocol_version":"1.0","capabilityServer":{"command":"echo-server"},"tools":[{"name":"echo"}]}}`, version),
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(src, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := cratesio.WriteCrate(&buf, "yolop-extension-echo", version, src); err != nil {
		t.Fatal(err)
	}
	crate := filepath.Join(t.TempDir(), "echo.crate")
	if err := os.WriteFile(crate, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cratesio.Publish(context.Background(), index, crate, cratesio.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
}

// `ext info` of a crate that is not installed writes nothing (it is a
// look, and a fresh config directory stays as it was); an install records
// the version it installed; `ext info` of the installed
// extension shows the update that waits and until when; Harness.Update
// holds it back and UpdateWith Now installs it.
func TestInfoAndUpdateShowTheCooldown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	index := filepath.Join(t.TempDir(), "index")
	srv := httptest.NewServer(cratesio.ServeIndex(index))
	t.Cleanup(srv.Close)
	reg := "sparse+" + srv.URL + "/"
	publishEcho(t, index, "1.0.0")
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[registry]\nretries = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	h, err := harness.Open(ctx, harness.Options{ConfigDir: cfg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Info(ctx, "echo", reg); err != nil {
		t.Fatal(err)
	}
	seen, err := firstseen.New(cfg).Seen(ctx, firstseen.Crate, firstseen.CrateKey(reg, "yolop-extension-echo"))
	if err != nil || len(seen) != 0 {
		t.Fatalf("info recorded %v, %v; want nothing", seen, err)
	}
	accept := func(string) manager.Consent { return func(context.Context, manager.Proposal) error { return nil } }
	if _, err := h.Manager().Install(ctx, manager.InstallRequest{Source: reg + "#yolop-extension-echo", Consent: accept("")}); err != nil {
		t.Fatal(err)
	}
	if seen, err = firstseen.New(cfg).Seen(ctx, firstseen.Crate, firstseen.CrateKey(reg, "yolop-extension-echo")); err != nil || !seen["1.0.0"].Equal(now) {
		t.Fatalf("install recorded %v, %v; want 1.0.0 seen now", seen, err)
	}

	publishEcho(t, index, "1.1.0")
	var outs []*manager.Outcome
	if _, err := h.Update(ctx, nil, "", accept, func(o *manager.Outcome) { outs = append(outs, o) }); err != nil || len(outs) != 1 || !outs[0].Held {
		t.Fatalf("update: %+v, %v", outs, err)
	}
	in, err := h.Info(ctx, "echo", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Waiting) != 1 || !strings.Contains(in.Text(), "  cooldown: update 1.1.0 waits until 2026-12-07 10:00 UTC (cooldown 48h)\n") {
		t.Fatalf("info: %+v\n%s", in.Waiting, in.Text())
	}
	outs = nil
	if _, err := h.UpdateWith(ctx, []string{"echo"}, manager.UpdateOptions{Now: true}, accept, func(o *manager.Outcome) { outs = append(outs, o) }); err != nil || len(outs) != 1 || outs[0].Entry.Version != "1.1.0" {
		t.Fatalf("update --now: %+v, %v", outs, err)
	}
	if in, err = h.Info(ctx, "echo", ""); err != nil || len(in.Waiting) != 0 || in.Version != "1.1.0" {
		t.Fatalf("info after --now: %+v, %v", in, err)
	}
}
