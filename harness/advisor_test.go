package harness

import (
	"strings"
	"testing"

	"yolop.dev/packaging"
)

// ext info names the pinned minisign key by its key id.
func TestInfoTextNamesTheMinisignKey(t *testing.T) {
	key := "RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3"
	in := &Info{Name: "echo", Version: "0.1.0", Installed: true, Kind: "crate", Approval: "approved",
		Lock: &LockFields{ContentHash: "h", MinisignKey: key}}
	want := "  minisign: key " + packaging.MinisignKeyID(key) + " (pinned; prebuilt artifacts must be signed by it)\n"
	if got := in.Text(); !strings.Contains(got, want) || packaging.MinisignKeyID(key) != "E7620F1842B4E81F" {
		t.Fatalf("info text lacks %q (key id %s):\n%s", want, packaging.MinisignKeyID(key), got)
	}
	in.Lock.MinisignKey = ""
	if strings.Contains(in.Text(), "minisign") {
		t.Fatal("info text names a minisign key the lock does not pin")
	}
}
