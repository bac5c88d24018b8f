package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/packaging"
)

// TestSparseRegistryInstallIsLabelledWithItsRegistry: a crate installed
// from --registry is labelled with that registry, not crates.io, in
// extensions.lock's source, in `ext list` and in errors; and the source
// recorded in the lock is itself an install source that goes back to the
// same registry.
func TestSparseRegistryInstallIsLabelledWithItsRegistry(t *testing.T) {
	cfg := isolate(t)
	index, reg := manifestOnlyIndex(t)
	label := reg + "#yolop-extension-echo"
	mustRun(t, "", "ext", "install", "echo", "--registry", reg, "--yes")

	e := readLock(t, cfg).Entry("echo")
	if e == nil {
		t.Fatal("no lock entry for echo")
	}
	if e.Source != label || e.Registry != reg || e.Kind != packaging.SourceCrate {
		t.Fatalf("lock entry source %q, registry %q, kind %s; want source %q and registry %q", e.Source, e.Registry, e.Kind, label, reg)
	}
	out, _ := mustRun(t, "", "ext", "list")
	mustContain(t, "ext list", out, "source: "+label)
	out, _ = mustRun(t, "", "ext", "list", "--json")
	var list []struct {
		Source string `json:"source"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].Source != label {
		t.Fatalf("ext list --json = %s (%v)", out, err)
	}
	if strings.Contains(out, "crates.io") {
		t.Errorf("ext list names crates.io for a crate from %s:\n%s", reg, out)
	}

	// An update that fails names the registry it went to.
	before := snapshot(t, cfg)
	crate := filepath.Join(index, "crates", "yolop-extension-echo", "0.1.0", "download")
	good := fileBytes(t, crate)
	os.Remove(crate)
	_, errOut, code := cli(t, "", "ext", "update", "echo", "--yes")
	if code == 0 {
		t.Fatal("update without the crate succeeded")
	}
	t.Log(errOut)
	mustContain(t, "update error", errOut, "fetching "+label+":", "404")
	if strings.Contains(errOut, "crates.io") {
		t.Errorf("the error names crates.io for a crate from %s:\n%s", reg, errOut)
	}
	sameSnapshot(t, "a failed update", before, snapshot(t, cfg))
	os.WriteFile(crate, good, 0o644)

	// The recorded source is an install source: installing it again goes
	// to the same registry and changes nothing.
	out, _ = mustRun(t, "", "ext", "install", label, "--yes")
	mustContain(t, "reinstall output", out, "echo is up to date")
	sameSnapshot(t, "re-installing the recorded source", before, snapshot(t, cfg))
}

// TestOldLockLabelStillUpdatesFromItsRegistry: a lock written before
// sources named their registry (source "crates.io:…" plus registry) still
// updates from that registry, and an update with nothing new leaves it
// byte-identical.
func TestOldLockLabelStillUpdatesFromItsRegistry(t *testing.T) {
	cfg := isolate(t)
	_, reg := manifestOnlyIndex(t)
	mustRun(t, "", "ext", "install", "echo", "--registry", reg, "--yes")
	lockPath := filepath.Join(cfg, packaging.LockFileName)
	lock := fileBytes(t, lockPath)
	old := bytes.Replace(lock, []byte(`"source": "`+reg+`#yolop-extension-echo"`), []byte(`"source": "crates.io:yolop-extension-echo"`), 1)
	if bytes.Equal(old, lock) {
		t.Fatalf("the lock does not record the source %s", reg+"#yolop-extension-echo")
	}
	if err := os.WriteFile(lockPath, old, 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, cfg)
	out, errOut := mustRun(t, "", "ext", "update", "echo", "--yes")
	mustContain(t, "update output", out, "echo is up to date")
	if strings.Contains(errOut, "index.crates.io") {
		t.Errorf("the update went to crates.io:\n%s", errOut)
	}
	sameSnapshot(t, "a no-op update of an old lock", before, snapshot(t, cfg))
}

// Installing an installed crate again from the same registry, without
// --yes and with no terminal, is a no-op: it is the same source, so there
// is nothing to approve, and every line names the registry.
func TestReinstallFromTheSameRegistryNeedsNoConsent(t *testing.T) {
	cfg := isolate(t)
	_, reg := manifestOnlyIndex(t)
	out, _ := mustRun(t, "", "ext", "install", "echo", "--registry", reg, "--yes")
	if strings.Contains(out, "crates.io") {
		t.Errorf("install output names crates.io for a crate from %s:\n%s", reg, out)
	}
	before := snapshot(t, cfg)
	out, errOut, code := cli(t, "", "ext", "install", "echo", "--registry", reg)
	if code != 0 {
		t.Fatalf("re-install from the same registry asked for consent: %d\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "reinstall", out, "echo is up to date")
	if strings.Contains(out+errOut, "replaces it") || strings.Contains(out+errOut, "crates.io") {
		t.Errorf("re-install output:\n%s\n%s", out, errOut)
	}
	sameSnapshot(t, "re-installing from the same registry", before, snapshot(t, cfg))
}

// The hint to re-run with --yes repeats the --registry the user gave, so
// pasting it installs from the same place.
func TestConsentHintKeepsTheRegistry(t *testing.T) {
	isolate(t)
	_, reg := manifestOnlyIndex(t)
	_, errOut, code := cli(t, "", "ext", "install", "echo", "--registry", reg)
	if code == 0 {
		t.Fatal("a fresh install without a terminal or --yes succeeded")
	}
	mustContain(t, "hint", errOut, "yolop ext install echo --registry "+reg+" --yes")
}

// `ext update --registry` moves a crate to another registry: the switch
// needs consent like any change of source, and the lock then names the
// new registry.
func TestUpdateFromAnotherRegistry(t *testing.T) {
	cfg := isolate(t)
	_, regA := manifestOnlyIndex(t)
	_, regB := manifestOnlyIndex(t)
	mustRun(t, "", "ext", "install", "echo", "--registry", regA, "--yes")
	_, errOut, code := cli(t, "", "ext", "update", "echo", "--registry", regB)
	if code == 0 {
		t.Fatal("moving to another registry needed no consent")
	}
	mustContain(t, "update without --yes", errOut, "yolop ext update echo --registry "+regB+" --yes")
	if e := readLock(t, cfg).Entry("echo"); e.Registry != regA {
		t.Fatalf("a declined move changed the lock: registry %s", e.Registry)
	}
	out, _ := mustRun(t, "", "ext", "update", "echo", "--registry", regB, "--yes")
	mustContain(t, "update --yes", out, "echo")
	if e := readLock(t, cfg).Entry("echo"); e.Registry != regB || e.Source != regB+"#yolop-extension-echo" {
		t.Fatalf("after the move: source %s registry %s; want %s", e.Source, e.Registry, regB)
	}
	if _, errOut, code := cli(t, "", "ext", "update", "nosuch"); code == 0 || strings.Count(errOut, "update nosuch:") != 1 {
		t.Fatalf("update of an unknown name repeats its prefix or succeeds: %d %q", code, errOut)
	}
}
