package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"yolop.dev/registry/cratesio"
)

// trickleRegistry serves a real published index from 127.0.0.1. Once
// trickle is set, every .crate download sends its real bytes one at a time
// with a pause between them: a registry that is alive but too slow. The
// handler stops as soon as the client gives up.
func trickleRegistry(t *testing.T, index string, pause time.Duration) (reg string, trickle *atomic.Bool) {
	t.Helper()
	trickle = new(atomic.Bool)
	static := cratesio.ServeIndex(index)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !trickle.Load() || !strings.HasSuffix(r.URL.Path, "/download") {
			static.ServeHTTP(w, r)
			return
		}
		p := filepath.Join(index, filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/")))
		body, err := os.ReadFile(p)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		for _, b := range body {
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(pause):
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "sparse+" + srv.URL + "/", trickle
}

// cliGuarded runs the CLI like cli does, with a context that ends a run
// that would otherwise hang; the guard is generous and is not what the
// tests check.
func cliGuarded(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb syncBuf
	code := run(ctx, args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// installTrickling installs echo from a trickle registry at full speed
// with the default limits, then writes limits into settings.toml and turns
// the trickle on. The update that follows revalidates the cached index
// (304, no body), so only the .crate download meets the tight limits.
func installTrickling(t *testing.T, limits string) (cfg string, trickle *atomic.Bool) {
	t.Helper()
	cfg = isolate(t)
	index, _ := manifestOnlyIndex(t)
	reg, trickle := trickleRegistry(t, index, 20*time.Millisecond)
	settings := filepath.Join(cfg, "settings.toml")
	if err := os.WriteFile(settings, []byte("[extensions]\nregistry = \""+reg+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "ext", "install", "echo", "--yes")
	if err := os.WriteFile(settings, []byte("[extensions]\nregistry = \""+reg+"\"\n\n[registry]\n"+limits), 0o644); err != nil {
		t.Fatal(err)
	}
	trickle.Store(true)
	return cfg, trickle
}

// TestSlowDownloadHitsTheLowSpeedLimit: a registry trickling the .crate
// far below [registry] low_speed_limit fails the update with an error
// naming the URL, the rate and the setting, and the store and lock stay
// byte-identical. The window is a few hundred milliseconds so the test is
// fast; nothing here depends on how long the run takes.
func TestSlowDownloadHitsTheLowSpeedLimit(t *testing.T) {
	cfg, _ := installTrickling(t, "low_speed_limit = 100000\nlow_speed_time = \"300ms\"\n")
	before := snapshot(t, cfg)
	_, errOut, code := cliGuarded(t, "ext", "update", "echo", "--yes")
	if code == 0 {
		t.Fatal("an update from a trickling registry succeeded")
	}
	t.Log(errOut)
	mustContain(t, "low-speed error", errOut,
		"download of http://127.0.0.1:", "/crates/yolop-extension-echo/0.1.0/download averaged ",
		" B/s over ", "below [registry] low_speed_limit = 100000 B/s", "[registry] low_speed_time", "settings.toml")
	sameSnapshot(t, "a too-slow update", before, snapshot(t, cfg))
}

// TestSlowDownloadHitsTheDownloadTimeout: with the low-speed check off, a
// download that keeps trickling is bounded by [registry] download_timeout,
// all attempts included.
func TestSlowDownloadHitsTheDownloadTimeout(t *testing.T) {
	cfg, _ := installTrickling(t, "low_speed_limit = 0\ndownload_timeout = \"3s\"\n")
	before := snapshot(t, cfg)
	_, errOut, code := cliGuarded(t, "ext", "update", "echo", "--yes")
	if code == 0 {
		t.Fatal("an update from a trickling registry succeeded")
	}
	t.Log(errOut)
	mustContain(t, "timeout error", errOut,
		"download of http://127.0.0.1:", "/crates/yolop-extension-echo/0.1.0/download did not finish within [registry] download_timeout = 3s",
		"settings.toml")
	sameSnapshot(t, "a timed-out update", before, snapshot(t, cfg))
}

// TestMalformedRegistryLimitsAreClear: a limit that does not parse is an
// error naming the file and the key, and nothing is downloaded or written.
func TestMalformedRegistryLimitsAreClear(t *testing.T) {
	cfg, trickle := installTrickling(t, "low_speed_time = \"soon\"\n")
	trickle.Store(false)
	before := snapshot(t, cfg)
	_, errOut, code := cliGuarded(t, "ext", "update", "echo", "--yes")
	if code == 0 {
		t.Fatal("an update with a malformed low_speed_time succeeded")
	}
	t.Log(errOut)
	mustContain(t, "settings error", errOut, "settings.toml", "registry.low_speed_time", `"30s"`)
	sameSnapshot(t, "a refused update", before, snapshot(t, cfg))
}

// TestUnreachableRegistryMessage: a registry nobody answers at is "cannot
// reach <host>: <cause>" from install, info and search, never an invalid
// config.json, and nothing is installed.
func TestUnreachableRegistryMessage(t *testing.T) {
	cfg := isolate(t)
	// One retry keeps the test short and still shows the attempts.
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[registry]\nretries = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := ln.Addr().String()
	ln.Close()
	reg := "sparse+http://" + host + "/"
	var installErr string
	for _, args := range [][]string{
		{"ext", "install", "yolop-extension-echo", "--registry", reg, "--yes"},
		{"ext", "info", "echo", "--registry", reg},
		{"ext", "search", "echo", "--registry", reg},
	} {
		_, errOut, code := cli(t, "", args...)
		if code == 0 {
			t.Fatalf("%v succeeded against a closed port", args)
		}
		mustContain(t, strings.Join(args[:2], " "), errOut, "cannot reach "+host+": ", "connection refused", "check your network")
		if args[1] == "install" {
			installErr = errOut
		}
		if strings.Contains(errOut, "config.json:") || strings.Contains(errOut, "invalid registry") || strings.Contains(errOut, "yolop-extension-yolop-extension") {
			t.Errorf("%v: %s", args, errOut)
		}
	}
	if !strings.Contains(installErr, "2 attempts") {
		t.Errorf("install did not follow [registry] retries = 1: %s", installErr)
	}
	if _, err := os.Stat(filepath.Join(cfg, "extensions.lock")); !os.IsNotExist(err) {
		t.Errorf("a failed install wrote the lock: %v", err)
	}
}
