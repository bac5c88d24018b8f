//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestRegistryProgressBarOnlyOnATerminal runs `yolop ext install` as a
// real process whose stderr is a pseudo-terminal: the download shows a
// progress bar there, and (TestRegistryPackageOnlyInstall) none when
// stderr is not a terminal.
func TestRegistryProgressBarOnlyOnATerminal(t *testing.T) {
	cfg := isolate(t)
	_, reg := manifestOnlyIndex(t)
	ptmx, tty := openPTY(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(exe, "ext", "install", "echo", "--registry", reg, "--yes")
	cmd.Env = append(os.Environ(), "YOLOP_TEST_CLI=1", "YOLOP_CONFIG_DIR="+cfg)
	cmd.Stdout, cmd.Stderr = &out, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds its own copy; EOF (EIO) comes when it exits
	var term bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(&term, ptmx)
		copied <- err
	}()
	werr := cmd.Wait()
	if err := <-copied; err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatalf("install: %v\n%s\n%s", werr, out.String(), term.String())
	}
	mustContain(t, "terminal stderr", term.String(), "downloading yolop-extension-echo 0.1.0")
	if strings.Contains(out.String(), "downloading") {
		t.Fatalf("the progress bar went to stdout:\n%s", out.String())
	}
}
