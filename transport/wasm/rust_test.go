package wasm_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/transport/wasm"
)

// buildRust compiles testdata/rustguest for WASI preview 1 with the first
// rustc that can: the one on PATH (rustup names the target wasm32-wasip1),
// then Debian's /usr/bin/rustc with libstd-rust-dev-wasm32 (rustc 1.63
// names it wasm32-wasi). It skips the test, saying what it tried, when
// none can.
func buildRust(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "rustguest", "main.rs"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rustguest.wasm")
	var tried []string
	candidates := []string{os.Getenv("RUSTC"), "rustc", "/usr/bin/rustc"}
	for _, rc := range candidates {
		if rc == "" {
			continue
		}
		path, err := exec.LookPath(rc)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: not found", rc))
			continue
		}
		for _, target := range []string{"wasm32-wasip1", "wasm32-wasi"} {
			cmd := exec.Command(path, "--edition", "2021", "-O", "--target", target, src, "-o", out)
			b, err := cmd.CombinedOutput()
			if err == nil {
				t.Logf("built the Rust guest with %s --target %s", path, target)
				return out
			}
			first, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
			tried = append(tried, fmt.Sprintf("%s --target %s: %s", path, target, first))
		}
	}
	if os.Getenv("CI") != "" {
		// .ci/run installs Debian's rustc with its wasm32 std: a CI run
		// without it is broken, not skipped.
		t.Fatalf("no rustc here can build for wasip1; .ci/run installs rustc and libstd-rust-dev-wasm32; tried:\n  %s", strings.Join(tried, "\n  "))
	}
	t.Skipf("no rustc here can build for wasip1 (rustup target add wasm32-wasip1, or apt-get install rustc libstd-rust-dev-wasm32); tried:\n  %s", strings.Join(tried, "\n  "))
	return ""
}

// TestRustGuest runs a raw-protocol YEP server written in Rust (std only)
// as a guest: the transport serves any wasip1 command, and the protocol
// needs nothing from the Go SDK. A Rust panic aborts with a trap.
func TestRustGuest(t *testing.T) {
	module := buildRust(t)
	tr := newTransport(t, wasm.Options{CacheDir: "-"})

	inst := start(t, tr, "rustecho", module, nil)
	c := connect(t, inst, nil)
	if out := c.mustCall("echo", map[string]any{"text": "ünïcode ✓ \"quoted\""}); out != "ünïcode ✓ \"quoted\"" {
		t.Errorf("echo = %q", out)
	}
	if err := c.shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := inst.Err(); err != nil {
		t.Errorf("after exit the Rust guest ended with %v, want a clean exit", err)
	}

	inst = start(t, tr, "rustecho", module, nil)
	c = connect(t, inst, nil)
	if _, err := c.call("panic", nil); !errors.As(err, new(*jsonrpc.ClosedError)) {
		t.Fatalf("panic: %v, want the connection closed", err)
	}
	waitDone(t, inst, "the panic")
	var te *wasm.TrapError
	var ee *core.ExitError
	if !errors.As(inst.Err(), &te) || !strings.Contains(te.Trap, "unreachable") || !errors.As(inst.Err(), &ee) || ee.Signal != wasm.SignalTrap {
		t.Fatalf("Err = %v, want a trap (Rust aborts with unreachable)", inst.Err())
	}
	if !strings.Contains(inst.Err().Error(), "asked to panic") {
		t.Errorf("message %q lacks the panic message from stderr", inst.Err())
	}
}
