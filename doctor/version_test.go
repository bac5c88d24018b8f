package doctor_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/doctor"
)

// A server may speak a newer minor than its manifest declares (minors only
// add; TestRunPassesTheEchoExample runs a 1.0 manifest whose SDK server
// answers ours), but one older than its manifest lacks what the manifest
// was written against: that is a warning.
func TestServerOlderThanItsManifestWarns(t *testing.T) {
	t.Parallel()
	// broken.py answers 1.0; the manifest declares 1.1.
	dir := brokenServer(t, map[string]string{"DOCTOR_MODE": "plain"}, echoTool, "")
	path := filepath.Join(dir, "plugin.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.Replace(raw, []byte(`"protocol_version":"1.0"`), []byte(`"protocol_version":"1.1"`), 1)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := runDoctor(t, dir, doctor.Options{})
	c := check(t, rep, "protocol", "server")
	if c.Status != doctor.Warn || !strings.Contains(c.Detail, "the server speaks 1.0 but the manifest declares 1.1") {
		t.Errorf("protocol server = %s: %s, want a warning naming both versions", c.Status, c.Detail)
	}
}
