package packaging

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestServerChecksum: an installed package pins its server executable's
// SHA-256 from the approved listing; a path source, a command on PATH and
// a WASM module pin nothing.
func TestServerChecksum(t *testing.T) {
	ctx := context.Background()
	s := NewStore(t.TempDir())
	src := version(t, "1.0.0", "a")
	if _, err := s.Install(ctx, gitInstall(src)); err != nil {
		t.Fatal(err)
	}
	v, err := s.VerifyInstalled(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(v.Dir, "bin/srv"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if got, want := v.ServerChecksum(), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("bare command: ServerChecksum = %q, want %q", got, want)
	}

	v.Manifest.Yolop.CapabilityServer.Command = "bin/srv"
	if got := v.ServerChecksum(); got != hex.EncodeToString(sum[:]) {
		t.Errorf("bin/srv: ServerChecksum = %q", got)
	}
	v.Manifest.Yolop.CapabilityServer.Command = "./README.md" // in the listing, not executable
	if got := v.ServerChecksum(); got != "" {
		t.Errorf("non-executable file: ServerChecksum = %q, want none", got)
	}
	v.Manifest.Yolop.CapabilityServer.Command = "python3" // not in bin/: PATH
	if got := v.ServerChecksum(); got != "" {
		t.Errorf("command on PATH: ServerChecksum = %q, want none", got)
	}
	v.Manifest.Yolop.CapabilityServer.Command = "srv"
	v.Exempt = true
	if got := v.ServerChecksum(); got != "" {
		t.Errorf("path source: ServerChecksum = %q, want none", got)
	}
	v.Exempt = false
	v.Manifest.Yolop.CapabilityServer.Transport = "wasm"
	if got := v.ServerChecksum(); got != "" {
		t.Errorf("wasm: ServerChecksum = %q, want none", got)
	}
}
